import type { AssureConfig, TestSpecDocument } from "../contract/index.js";
import { planConfigRuns } from "./config-plan.js";
import { loadRepositorySpec, type ReadFile } from "../specs/repository-spec.js";
import type { Policy } from "../changes/policy-changes.js";

/** Reads a spec file at a commit for its document (undefined when it is not a valid spec). */
export type LoadSpecDocument = (
  path: string,
  bytes: Buffer,
  readFile: ReadFile,
) => Promise<TestSpecDocument | undefined>;

/** Reads it here, on this thread: the Action's way (the service reads through its spec reader). */
export const loadSpecDocumentHere: LoadSpecDocument = async (path, bytes, readFile) => {
  const loaded = await loadRepositorySpec(path, bytes, readFile);
  return loaded.ok ? loaded.spec.document : undefined;
};

/**
 * A branch's `.assure/` as policy: its config and every spec file the config runs, by spec name.
 * A spec file that is not valid is left out: it cannot hold anyone to anything (the head's own
 * check reports it).
 */
export async function readPolicy(
  config: AssureConfig | null,
  paths: readonly string[],
  readFile: ReadFile,
  loadDocument: LoadSpecDocument = loadSpecDocumentHere,
): Promise<Policy> {
  const specs = new Map<string, TestSpecDocument>();
  const runs = new Map<string, string | null>();
  if (!config) return { config, specs, runs };
  const { pairs } = planConfigRuns(config, paths);
  const nameOf = new Map<string, string>();
  for (const path of [...new Set(pairs.map((pair) => pair.specPath))].sort()) {
    const bytes = await readFile(path);
    if (!bytes) continue;
    const document = await loadDocument(path, bytes, readFile);
    if (!document) continue;
    nameOf.set(path, document.name);
    if (!specs.has(document.name)) specs.set(document.name, document);
  }
  // Which spec (by name, wherever its file is) runs in which environment, and against which deployment.
  for (const pair of pairs) {
    const name = nameOf.get(pair.specPath);
    if (name) runs.set(`'${name}' in ${pair.environmentName}`, pair.onDeployment ?? null);
  }
  return { config, specs, runs };
}
