import type { ReleaseDecision } from "../../../server/contract/index.js";
import type { ServiceStore } from "../../../server/store/service-store.js";
import { evaluationsOf, type RunResult } from "./run-results.js";

/** The version of the shape `--json` writes: bumped on a change that is not additive. */
export const JSON_OUTPUT_VERSION = "1";

/**
 * What `--json` writes: the release decision on the runs, and each run's evidence exactly as
 * `GET /v1/runs/{id}/evidence` serves it (gates, findings, counts, usage), with every evaluation
 * as `GET /v1/runs/{id}/evaluations` lists them. Its paths are the API's, for when the run is sent
 * to a service.
 */
export async function renderJson(
  store: ServiceStore,
  decision: ReleaseDecision,
  runs: readonly RunResult[],
): Promise<string> {
  const documents = [];
  for (const result of runs) {
    documents.push({
      spec_file: result.spec.path,
      evidence: result.evidence,
      evaluations: await evaluationsOf(store, result.run.run_id),
    });
  }
  return JSON.stringify({ output_version: JSON_OUTPUT_VERSION, decision, runs: documents }, null, 2);
}
