import type { TestSpecSummary } from "../contract/index.js";
import type { ReadVersion } from "../spec-reader/read-spec.js";
import type { SpecReader } from "../spec-reader/spec-reader.js";
import type { ReadFile, SpecFileProblem } from "../specs/repository-spec.js";
import type { DecisionDeps } from "./create-decision.js";

export interface SpecDeps extends Pick<DecisionDeps, "store" | "clock" | "newId"> {
  specReader: SpecReader;
}

/** Stores a version of a spec (read by the spec reader) in the project, or finds the one it equals. */
export async function storeSpecVersion(
  { store, clock, newId }: Pick<SpecDeps, "store" | "clock" | "newId">,
  projectId: string,
  version: ReadVersion,
): Promise<{ spec: TestSpecSummary; created: boolean }> {
  const [outcome] = await store.write([
    "addTestSpecVersion",
    { ...version, project_id: projectId },
    newId("testSpec"),
    clock.now().toISOString(),
  ]);
  return outcome;
}

/**
 * Adds the version of a spec file at a commit, as the App finds it and a workflow uploads it:
 * the tables its scenarios name read with `readFile` and inlined, all of it read off the event
 * loop (versioned by its Git blob SHA — by its expanded content when it read tables — keeping its
 * source); or every problem, by file and line.
 */
export async function addRepositorySpec(
  deps: SpecDeps,
  projectId: string,
  where: { repository: string; commit_sha: string; path: string },
  bytes: Buffer,
  readFile: ReadFile,
): Promise<{ ok: true; spec: TestSpecSummary; created: boolean } | { ok: false; problems: SpecFileProblem[] }> {
  const read = await deps.specReader.readRepositoryFile(where, bytes, readFile);
  if (!read.ok) return read;
  return { ok: true, ...(await storeSpecVersion(deps, projectId, read.version)) };
}
