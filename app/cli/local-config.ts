import { planConfigRuns } from "../../server/releases/config-plan.js";
import { LocalAssureConfig } from "../../server/releases/gating-config.js";
import type { SpecFileProblem } from "../../server/specs/repository-spec.js";
import { readSpecYaml, validateYaml } from "../../server/specs/read-yaml.js";
import { explainProblem } from "./did-you-mean.js";
import { listAssureFiles } from "./project-files.js";

export type ConfigRead =
  | { ok: true; config: LocalAssureConfig; lineOf: (path: readonly PropertyKey[]) => number | undefined }
  | { ok: false; problems: SpecFileProblem[] };

/** `.assure/config.yml` checked as a local run reads it (a project is optional), each problem at its line. */
export function readLocalConfig(file: string, bytes: Buffer): ConfigRead {
  const read = validateYaml(bytes, LocalAssureConfig);
  if (read.ok) return { ok: true, config: read.value, lineOf: read.source.lineOf };
  const yaml = readSpecYaml(bytes);
  const lineOf = yaml.ok ? yaml.source.lineOf : undefined;
  return {
    ok: false,
    problems: read.problems.map((problem) =>
      explainProblem(
        LocalAssureConfig,
        { file, line: problem.line ?? 1, path: problem.path, message: problem.message },
        lineOf,
      ),
    ),
  };
}

/**
 * The spec files the config runs, as repository paths (each once, whatever its environments: a
 * local run tests the one agent it is given), and the globs that match no file.
 */
export function specsOfConfig(
  root: string,
  config: LocalAssureConfig,
): { paths: string[]; unmatched: ReturnType<typeof planConfigRuns>["unmatched"] } {
  const { pairs, unmatched } = planConfigRuns(config, listAssureFiles(root));
  return { paths: [...new Set(pairs.map((pair) => pair.specPath))], unmatched };
}
