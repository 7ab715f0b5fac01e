import type { SpecSource, TestSpec, TestSpecDocument } from "../contract/index.js";
import type { SpecSource as SpecText } from "../specs/read-yaml.js";
import { toSpecVersion } from "../specs/spec-version.js";
import type { DecisionDeps } from "./create-decision.js";

/**
 * Adds a version of a (valid) spec to the project, or finds the one it equals: from the API, or
 * from a repository's file (then versioned by its Git blob SHA and keeping its source).
 */
export async function addSpecVersion(
  { store, clock, newId }: DecisionDeps,
  projectId: string,
  document: TestSpecDocument,
  { text, source }: { text?: SpecText | undefined; source?: SpecSource | null | undefined } = {},
): Promise<{ spec: TestSpec; created: boolean }> {
  const version = toSpecVersion(document, text, { fromRepository: Boolean(source) });
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
