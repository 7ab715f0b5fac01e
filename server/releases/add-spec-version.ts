import type { SpecSource, TestSpec, TestSpecDocument } from "../contract/index.js";
import type { SpecSource as SpecText } from "../specs/read-yaml.js";
import { loadRepositorySpec, type ReadFile, type SpecFileProblem } from "../specs/repository-spec.js";
import { toSpecVersion } from "../specs/spec-version.js";
import type { DecisionDeps } from "./create-decision.js";

/**
 * Adds a version of a (valid) spec to the project, or finds the one it equals: from the API, or
 * from a repository's file (then versioned by its Git blob SHA — by its expanded content when it
 * read tables — and keeping its source).
 */
export async function addSpecVersion(
  { store, clock, newId }: DecisionDeps,
  projectId: string,
  document: TestSpecDocument,
  { text, source, expanded = false }: { text?: SpecText | undefined; source?: SpecSource | null | undefined; expanded?: boolean } = {},
): Promise<{ spec: TestSpec; created: boolean }> {
  const version = toSpecVersion(document, text, { fromRepository: Boolean(source), expanded });
  const [outcome] = await store.write([
    "addTestSpecVersion",
    {
      project_id: projectId,
      name: document.name,
      spec_version: version.spec_version,
      document: version.canonical,
      source_format: text === undefined ? "json" : "yaml",
      source_text: text?.text ?? JSON.stringify(document, null, 2),
      source_lines: version.lines && JSON.stringify(version.lines),
      source: source ?? null,
    },
    newId("testSpec"),
    clock.now().toISOString(),
  ]);
  return outcome;
}

/**
 * Adds the version of a spec file at a commit, as the App finds it and a workflow uploads it:
 * the tables its scenarios name read with `readFile` and inlined; or every problem, by file and line.
 */
export async function addRepositorySpec(
  deps: DecisionDeps,
  projectId: string,
  where: { repository: string; commit_sha: string; path: string },
  bytes: Buffer,
  readFile: ReadFile,
): Promise<{ ok: true; spec: TestSpec; created: boolean } | { ok: false; problems: SpecFileProblem[] }> {
  const loaded = await loadRepositorySpec(where.path, bytes, readFile);
  if (!loaded.ok) return loaded;
  const { document, text, files, expanded } = loaded.spec;
  const source: SpecSource = { ...where, ...(expanded ? { files } : {}) };
  return { ok: true, ...(await addSpecVersion(deps, projectId, document, { text, source, expanded })) };
}
