import { evidencePath, runPath, type Evidence, type Run } from "../contract/index.js";

/**
 * The evidence document of a run: what was tested, where, with which outcome and why.
 * While the run is in progress the verdict is PENDING and gates are empty.
 */
export function buildEvidence(run: Run, environmentName: string): Evidence {
  return {
    evidence_version: "1",
    run_id: run.run_id,
    project_id: run.project_id,
    test_spec_id: run.test_spec_id,
    spec_version: run.spec_version,
    agent_id: run.agent_id,
    agent_version: run.agent_version,
    environment: environmentName,
    environment_id: run.environment_id,
    status: run.status,
    verdict: run.verdict,
    failure: run.failure,
    gates: [],
    evaluations: [],
    findings: [],
    links: { run: runPath(run.run_id), self: evidencePath(run.run_id) },
  };
}
