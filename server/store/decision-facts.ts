import { evaluationPath, findingPath, type Pricing, type TestSpecDocument } from "../contract/index.js";
import type { DecisionFacts, GateFacts, RunFacts } from "../decisions/judge-decision.js";
import { CASE_KINDS } from "../specs/evaluation-kinds/index.js";
import type { AgentUsage } from "../usage/agent-usage.js";
import type { Db } from "./db.js";
import type { RunRow } from "./runs.js";

/** What deciding a release reads (`DecisionFacts`), as SQLite queries and decoded rows. */
export function makeDecisionFacts(db: Db): DecisionFacts {
  const runById = db.prepare("SELECT * FROM runs WHERE run_id = ?");
  const specDocument = db
    .prepare("SELECT document FROM test_spec_versions WHERE test_spec_id = ? AND spec_version = ? LIMIT 1")
    .pluck();
  const gatesOf = db.prepare("SELECT * FROM gate_results WHERE run_id = ? ORDER BY position");
  const labelOf = db
    .prepare(
      `SELECT (SELECT name FROM test_specs WHERE test_spec_id = ?) || ' in ' ||
      (SELECT name FROM environments WHERE environment_id = ?) AS label`,
    )
    .pluck();
  const decidedOnCommit = db
    .prepare(
      `SELECT decision_id FROM release_decisions
    WHERE project_id = ? AND repository = ? AND commit_sha = ? AND status != 'PENDING'`,
    )
    .pluck();
  const runOfSlot = db
    .prepare(
      `SELECT s.run_id FROM release_decision_slots s JOIN release_decisions d ON d.decision_id = s.decision_id AND d.attempt = s.attempt
    WHERE s.decision_id = ? AND s.test_spec_id = ? AND s.environment_id = ?`,
    )
    .pluck();
  // One row per conversation and check of the kinds compared case by case: passed when every
  // evaluation of it passed; the mean score; the evaluation to cite (a failed one when there is one).
  // A check is its spec path: two expectations of a scenario share a metric id (expect.tool_called).
  const caseEvaluations = db.prepare(`SELECT kind, scenario_id, spec_path, metric_id, conversation_id, NULL AS turn,
      CASE WHEN MIN(CASE WHEN status = 'passed' THEN 1 ELSE 0 END) = 1 THEN 'passed' ELSE 'failed' END AS status, AVG(score) AS score,
      COALESCE(MIN(CASE WHEN status = 'failed' THEN evaluation_id END), MIN(evaluation_id)) AS evaluation_id
    FROM evaluations
    WHERE run_id = @run_id AND kind IN (${db.dialect.jsonArrayValues("@kinds")}) AND scenario_id IS NOT NULL
      AND status IN ('passed', 'failed')
    GROUP BY kind, scenario_id, metric_id, conversation_id, spec_path`);
  const kinds = JSON.stringify(CASE_KINDS);
  // What a failed gate of the head can cite, with the case each belongs to.
  const citedOfRun =
    db.prepare(`SELECT evaluation_id AS id, 'evaluation' AS what, kind, scenario_id, spec_path, metric_id, status, score, conversation_id, turn
      FROM evaluations WHERE run_id = @run_id AND status != 'passed'
    UNION ALL SELECT finding_id, 'finding', 'probe', probe_id, spec_path, NULL, 'failed', 0, NULL, NULL FROM findings WHERE run_id = @run_id`);

  return {
    run(runId): RunFacts | undefined {
      const row = runById.get(runId) as RunRow | undefined;
      if (!row) return undefined;
      return {
        run_id: row.run_id,
        status: row.status,
        verdict: row.verdict,
        failure: row.failure_cause ? { cause: row.failure_cause, message: row.failure_message ?? "" } : null,
        test_spec_id: row.test_spec_id,
        executor: row.executor,
        uploaded_by: row.uploaded_by,
        spec: JSON.parse(specDocument.get(row.test_spec_id, row.spec_version) as string) as TestSpecDocument,
        usage: row.agent_usage ? (JSON.parse(row.agent_usage) as AgentUsage) : null,
        pricing: JSON.parse(row.pricing ?? "{}") as Pricing,
      };
    },
    gates(runId): GateFacts[] {
      return (
        gatesOf.all(runId) as { gate_id: string; status: GateFacts["status"]; reason: string; evidence_refs: string }[]
      ).map((gate) => ({
        gate_id: gate.gate_id,
        status: gate.status,
        reason: gate.reason,
        evidence_refs: JSON.parse(gate.evidence_refs) as string[],
      }));
    },
    caseEvaluations: (runId) =>
      caseEvaluations.all({ run_id: runId, kinds }) as ReturnType<DecisionFacts["caseEvaluations"]>,
    citedCases(runId) {
      type Cited = ReturnType<DecisionFacts["citedCases"]>[number] & { id: string; what: "evaluation" | "finding" };
      return (citedOfRun.all({ run_id: runId }) as Cited[]).map(({ id, what, ...row }) => ({
        ...row,
        ref: what === "evaluation" ? evaluationPath(runId, id) : findingPath(runId, id),
      }));
    },
    runOfSlot: (decisionId, testSpecId, environmentId) =>
      runOfSlot.get(decisionId, testSpecId, environmentId) as string | null | undefined,
    slotLabel: (testSpecId, environmentId) => labelOf.get(testSpecId, environmentId) as string,
    decidedDecisionOf: (projectId, repository, commitSha) =>
      decidedOnCommit.get(projectId, repository, commitSha) as string | undefined,
  };
}
