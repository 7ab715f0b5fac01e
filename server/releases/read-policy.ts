import type { AssureConfig, TestSpecDocument } from "../contract/index.js";
import { planConfigRuns } from "./config-plan.js";
import { loadRepositorySpec, type ReadFile } from "../specs/repository-spec.js";
import type { Policy } from "../changes/policy-changes.js";

/**
 * A branch's `.assure/` as policy: its config and every spec file the config runs, by spec name.
 * A spec file that is not valid is left out: it cannot hold anyone to anything (the head's own
 * check reports it).
 */
export async function readPolicy(config: AssureConfig | null, paths: readonly string[], readFile: ReadFile): Promise<Policy> {
  const specs = new Map<string, TestSpecDocument>();
  if (!config) return { config, specs };
  const specPaths = new Set(planConfigRuns(config, paths).pairs.map((pair) => pair.specPath));
  for (const path of [...specPaths].sort()) {
    const bytes = await readFile(path);
    if (!bytes) continue;
    const loaded = await loadRepositorySpec(path, bytes, readFile);
    if (loaded.ok && !specs.has(loaded.spec.document.name)) specs.set(loaded.spec.document.name, loaded.spec.document);
  }
  return { config, specs };
}
