import { AssureConfig } from "../contract/index.js";
import { validateYaml } from "../specs/read-yaml.js";

/** `.assure/config.yml` as `assure test` and `assure validate` read it: a local run needs no project. */
export const LocalAssureConfig = AssureConfig.partial({ project: true });
export type LocalAssureConfig = ReturnType<typeof LocalAssureConfig.parse>;

export const NO_PROJECT_MESSAGE =
  "no project is named: a config without one serves local runs (assure test) only; to gate this repository's commits, name the assure project they are gated for (project: <project_id>)";

/**
 * The config as a commit is gated by it (the App): the project it names is required, and a config
 * that would only do for local runs is refused as such; otherwise each problem with its line.
 */
export function readGatingConfig(bytes: Buffer): ReturnType<typeof validateYaml<AssureConfig>> {
  const read = validateYaml(bytes, AssureConfig);
  if (read.ok) return read;
  const local = validateYaml(bytes, LocalAssureConfig);
  if (local.ok && local.value.project === undefined) {
    return {
      ok: false,
      problems: [{ path: "project", message: NO_PROJECT_MESSAGE, line: local.source.lineOf([]) ?? 1 }],
    };
  }
  return read;
}
