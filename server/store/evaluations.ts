import type { Evaluation } from "../contract/index.js";
import type { Sql } from "./sql/sql.js";

/** An evaluation as stored: its judge and evidence refs as JSON. */
type EvaluationRow = Omit<Evaluation, "judge" | "evidence_refs"> & { judge: string; evidence_refs: string };

export function toEvaluation(row: EvaluationRow): Evaluation {
  return {
    evaluation_id: row.evaluation_id,
    run_id: row.run_id,
    kind: row.kind,
    metric_id: row.metric_id,
    scope: row.scope,
    score: row.score,
    threshold: row.threshold,
    status: row.status,
    judge: JSON.parse(row.judge) as Evaluation["judge"],
    evidence_refs: JSON.parse(row.evidence_refs) as string[],
    reason: row.reason,
    scenario_id: row.scenario_id,
    conversation_id: row.conversation_id,
    turn: row.turn,
    spec_path: row.spec_path,
    created_at: row.created_at,
  };
}

const toEvaluationRow = (evaluation: Evaluation): EvaluationRow => ({
  ...evaluation,
  judge: JSON.stringify(evaluation.judge),
  evidence_refs: JSON.stringify(evaluation.evidence_refs),
});

/** An LLM judge's tokens over a run's evaluations. */
export interface JudgeUsage {
  answers: number;
  answers_without_usage: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** A gate a run's evaluation judged, in the order of the spec's gates. */
export interface GateResult {
  run_id: string;
  position: number;
  gate_id: string;
  title: string | null;
  status: "passed" | "failed" | "inconclusive" | "waived";
  reason: string;
  evidence_refs: string[];
}

type GateResultRow = Omit<GateResult, "evidence_refs"> & { evidence_refs: string };

export function makeEvaluationsStore(db: Sql) {
  const insertEvaluation =
    db.prepare(`INSERT INTO evaluations (evaluation_id, run_id, kind, metric_id, scope, scenario_id,
      conversation_id, turn, spec_path, score, threshold, status, judge, reason, evidence_refs, created_at)
    VALUES (@evaluation_id, @run_id, @kind, @metric_id, @scope, @scenario_id, @conversation_id, @turn, @spec_path, @score,
      @threshold, @status, @judge, @reason, @evidence_refs, @created_at)`);
  const insertGate =
    db.prepare(`INSERT INTO gate_results (run_id, position, gate_id, title, status, reason, evidence_refs)
    VALUES (@run_id, @position, @gate_id, @title, @status, @reason, @evidence_refs)`);
  const evaluationById = db.prepare("SELECT * FROM evaluations WHERE run_id = ? AND evaluation_id = ?");
  const evaluationsPage = db.prepare(`SELECT * FROM evaluations WHERE run_id = @run_id
      AND (CAST(@after AS TEXT) IS NULL OR evaluation_id > @after)
      AND (CAST(@status AS TEXT) IS NULL OR status = @status) AND (CAST(@kind AS TEXT) IS NULL OR kind = @kind)
      AND (CAST(@metric_id AS TEXT) IS NULL OR metric_id = @metric_id)
    ORDER BY evaluation_id LIMIT @limit`);
  const gatesOfRun = db.prepare("SELECT * FROM gate_results WHERE run_id = ? ORDER BY position");
  const countsOfRun = db.prepare("SELECT status, COUNT(*) AS n FROM evaluations WHERE run_id = ? GROUP BY status");
  // An evaluation an LLM judge answered for has `judge.usage` (JSON null when the answer reported none).
  const d = db.dialect;
  const judgeUsageOf = db
    .prepare(
      `SELECT ${d.jsonObject({
        answers: "COUNT(*)",
        answers_without_usage: `COALESCE(SUM(CASE WHEN ${d.jsonType("judge", "$.usage")} = 'null' THEN 1 ELSE 0 END), 0)`,
        input_tokens: `COALESCE(SUM(${d.jsonNumber("judge", "$.usage.input_tokens")}), 0)`,
        output_tokens: `COALESCE(SUM(${d.jsonNumber("judge", "$.usage.output_tokens")}), 0)`,
        total_tokens: `COALESCE(SUM(${d.jsonNumber("judge", "$.usage.total_tokens")}), 0)`,
      })} AS usage
      FROM evaluations WHERE run_id = ? AND ${d.jsonType("judge", "$.usage")} IS NOT NULL`,
    )
    .pluck();

  return {
    reads: {
      async getEvaluation(runId: string, evaluationId: string): Promise<Evaluation | undefined> {
        const row = await evaluationById.get<EvaluationRow>(runId, evaluationId);
        return row && toEvaluation(row);
      },
      /** Ascending by id (= creation order), after the given id. */
      async listEvaluations(
        runId: string,
        filter: { status?: string | undefined; kind?: string | undefined; metric_id?: string | undefined },
        after: string | undefined,
        limit: number,
      ): Promise<Evaluation[]> {
        const rows = await evaluationsPage.all<EvaluationRow>({
          run_id: runId,
          after: after ?? null,
          status: filter.status ?? null,
          kind: filter.kind ?? null,
          metric_id: filter.metric_id ?? null,
          limit,
        });
        return rows.map(toEvaluation);
      },
      /** What an LLM judge's answers reported of their tokens over the run's evaluations. */
      async sumJudgeUsage(runId: string): Promise<JudgeUsage> {
        return JSON.parse((await judgeUsageOf.get<string>(runId))!) as JudgeUsage;
      },
      async countEvaluations(runId: string): Promise<Record<Evaluation["status"], number>> {
        const counts = { passed: 0, failed: 0, inconclusive: 0, errored: 0 };
        for (const { status, n } of await countsOfRun.all<{ status: Evaluation["status"]; n: number }>(runId)) {
          counts[status] = n;
        }
        return counts;
      },
      async listGateResults(runId: string): Promise<GateResult[]> {
        return (await gatesOfRun.all<GateResultRow>(runId)).map((row) => ({
          ...row,
          evidence_refs: JSON.parse(row.evidence_refs) as string[],
        }));
      },
    },
    writes: {
      async insertEvaluations(evaluations: readonly Evaluation[]): Promise<void> {
        for (const evaluation of evaluations) await insertEvaluation.run(toEvaluationRow(evaluation));
      },
      async insertGateResults(gates: readonly GateResult[]): Promise<void> {
        for (const gate of gates) await insertGate.run({ ...gate, evidence_refs: JSON.stringify(gate.evidence_refs) });
      },
    },
  };
}
