import {
  evaluationPath,
  findingPath,
  type DecisionBase,
  type Pricing,
  type Run,
  type TestSpecDocument,
} from "../contract/index.js";
import type { DecisionFacts, DecisionRecord, GateFacts } from "../decisions/judge-decision.js";
import { CASE_KINDS } from "../specs/evaluation-kinds/index.js";
import type { AgentUsage } from "../usage/agent-usage.js";
import type { Sql } from "./sql/sql.js";
import type { RunRow } from "./runs.js";

/** The port's reads as the database answers them: later. */
type FactReads = {
  [Read in keyof DecisionFacts]: (...args: Parameters<DecisionFacts[Read]>) => Promise<ReturnType<DecisionFacts[Read]>>;
};

/** The runs judging compares case by case (judge-decision's JUDGED); it reads no further into the others. */
const JUDGED: ReadonlySet<Run["status"]> = new Set(["COMPLETED", "INCONCLUSIVE"]);

/**
 * A read whose answers are kept by their arguments, to be given again synchronously (`answer`):
 * asking what was not read first is a defect of the reading ahead, and throws.
 */
function remembered<Args extends string[], Answer>(name: string, read: (...args: Args) => Promise<Answer>) {
  const answers = new Map<string, Answer>();
  return {
    async read(...args: Args): Promise<Answer> {
      const key = JSON.stringify(args);
      if (!answers.has(key)) answers.set(key, await read(...args));
      return answers.get(key) as Answer;
    },
    answer(...args: Args): Answer {
      const key = JSON.stringify(args);
      if (!answers.has(key)) {
        throw new Error(`deciding asked for ${name}(${args.join(", ")}), which was not read ahead`);
      }
      return answers.get(key) as Answer;
    },
  };
}

/**
 * What deciding a release reads (`DecisionFacts`), as SQL queries and decoded rows. Judging is
 * pure and synchronous, and the database answers later: everything judging a decision (or
 * choosing its baseline) can ask for is read first, and the port answers from that.
 */
export function makeDecisionFacts(db: Sql) {
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

  const reads: FactReads = {
    async run(runId) {
      const row = await runById.get<RunRow>(runId);
      if (!row) return undefined;
      const spec = await specDocument.get<string>(row.test_spec_id, row.spec_version);
      return {
        run_id: row.run_id,
        status: row.status,
        verdict: row.verdict,
        failure: row.failure_cause ? { cause: row.failure_cause, message: row.failure_message ?? "" } : null,
        test_spec_id: row.test_spec_id,
        executor: row.executor,
        uploaded_by: row.uploaded_by,
        spec: JSON.parse(spec!) as TestSpecDocument,
        usage: row.agent_usage ? (JSON.parse(row.agent_usage) as AgentUsage) : null,
        pricing: JSON.parse(row.pricing ?? "{}") as Pricing,
      };
    },
    async gates(runId) {
      const rows = await gatesOf.all<{
        gate_id: string;
        status: GateFacts["status"];
        reason: string;
        evidence_refs: string;
      }>(runId);
      return rows.map((gate) => ({
        gate_id: gate.gate_id,
        status: gate.status,
        reason: gate.reason,
        evidence_refs: JSON.parse(gate.evidence_refs) as string[],
      }));
    },
    caseEvaluations: (runId) =>
      caseEvaluations.all<ReturnType<DecisionFacts["caseEvaluations"]>[number]>({ run_id: runId, kinds }),
    async citedCases(runId) {
      type Cited = ReturnType<DecisionFacts["citedCases"]>[number] & { id: string; what: "evaluation" | "finding" };
      return (await citedOfRun.all<Cited>({ run_id: runId })).map(({ id, what, ...row }) => ({
        ...row,
        ref: what === "evaluation" ? evaluationPath(runId, id) : findingPath(runId, id),
      }));
    },
    runOfSlot: (decisionId, testSpecId, environmentId) =>
      runOfSlot.get<string | null>(decisionId, testSpecId, environmentId),
    slotLabel: async (testSpecId, environmentId) => (await labelOf.get<string>(testSpecId, environmentId))!,
    decidedDecisionOf: (projectId, repository, commitSha) =>
      decidedOnCommit.get<string>(projectId, repository, commitSha),
  };

  return {
    /** Everything `judgeDecision` reads to judge `record`: its runs, and what they are compared with. */
    async forJudging(record: DecisionRecord): Promise<DecisionFacts> {
      const run = remembered("run", reads.run);
      const gates = remembered("gates", reads.gates);
      const caseEvaluations = remembered("caseEvaluations", reads.caseEvaluations);
      const citedCases = remembered("citedCases", reads.citedCases);
      const runOfSlot = remembered("runOfSlot", reads.runOfSlot);
      const slotLabel = remembered("slotLabel", reads.slotLabel);
      const { base, baseline, history } = record;
      // The base branch's decisions a judged run is compared with: for flakiness, and the baseline.
      const compared = [...history, ...(baseline?.found && baseline.decision_id ? [baseline.decision_id] : [])];
      for (const slot of record.slots) {
        await slotLabel.read(slot.test_spec_id, slot.environment_id);
        const head = slot.run_id ? await run.read(slot.run_id) : undefined;
        if (!head) continue;
        await gates.read(head.run_id);
        if (!base || !baseline || !JUDGED.has(head.status)) continue;
        await caseEvaluations.read(head.run_id);
        await citedCases.read(head.run_id);
        for (const decisionId of compared) {
          const runId = await runOfSlot.read(decisionId, slot.test_spec_id, slot.environment_id);
          const other = runId ? await run.read(runId) : undefined;
          if (other && JUDGED.has(other.status)) await caseEvaluations.read(other.run_id);
        }
      }
      return {
        run: run.answer,
        gates: gates.answer,
        caseEvaluations: caseEvaluations.answer,
        citedCases: citedCases.answer,
        runOfSlot: runOfSlot.answer,
        slotLabel: slotLabel.answer,
        decidedDecisionOf: remembered("decidedDecisionOf", reads.decidedDecisionOf).answer,
      };
    },
    /** Everything `chooseBaselineOf` reads: the decided decisions of the base branch's commits it looks at. */
    async forBaseline(
      decision: { project_id: string; repository: string },
      base: DecisionBase,
    ): Promise<Pick<DecisionFacts, "decidedDecisionOf">> {
      const decidedDecisionOf = remembered("decidedDecisionOf", reads.decidedDecisionOf);
      for (const commit of base.commits.slice(0, base.settings.baseline.depth)) {
        await decidedDecisionOf.read(decision.project_id, decision.repository, commit.sha);
      }
      return { decidedDecisionOf: decidedDecisionOf.answer };
    },
  };
}
