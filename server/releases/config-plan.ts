import picomatch from "picomatch";
import type { AssureConfig } from "../contract/index.js";

/** A spec file to run in a named environment, as `.assure/config.yml` asks for it at a commit. */
export interface ConfigPair {
  specPath: string;
  environmentName: string;
  /** Where in the config it is asked for: `runs[entry].environments[environment]`. */
  entry: number;
  environment: number;
  /** The GitHub environment whose deployment the run waits for, if any. */
  onDeployment: string | undefined;
  deploymentTimeoutMs: number;
  /** local: the run is executed outside the service and uploaded; the decision waits for the upload. */
  executor: "service" | "local";
}

/**
 * What a config asks to run among a commit's files: each file its globs match, in each environment
 * of its entry, once per (file, environment) — the App and the Action plan the same runs from the
 * same config. Globs that match nothing are returned to be reported.
 */
export function planConfigRuns(
  config: Pick<AssureConfig, "runs">,
  paths: readonly string[],
): { pairs: ConfigPair[]; unmatched: { entry: number; spec: number; glob: string }[] } {
  const pairs: ConfigPair[] = [];
  const unmatched: { entry: number; spec: number; glob: string }[] = [];
  for (const [entry, runs] of config.runs.entries()) {
    for (const [spec, glob] of runs.specs.entries()) {
      const isMatch = picomatch(glob, { dot: true });
      const matching = paths.filter((path) => isMatch(path)).sort();
      if (matching.length === 0) unmatched.push({ entry, spec, glob });
      for (const specPath of matching) {
        for (const [environment, environmentName] of runs.environments.entries()) {
          if (pairs.some((p) => p.specPath === specPath && p.environmentName === environmentName)) continue;
          pairs.push({
            specPath,
            environmentName,
            entry,
            environment,
            onDeployment: runs.on_deployment,
            deploymentTimeoutMs: runs.deployment_timeout,
            executor: runs.executor,
          });
        }
      }
    }
  }
  return { pairs, unmatched };
}
