import type { Evaluation } from "../contract/index.js";
import type { Db } from "./db.js";

/** An evaluation as stored: its judge and evidence refs as JSON. */
export type EvaluationRow = Omit<Evaluation, "judge" | "evidence_refs"> & { judge: string; evidence_refs: string };

/** An LLM judge's tokens over a run's evaluations. */
export interface JudgeUsage {
  answers: number;
  answers_without_usage: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface GateResultRow {
  run_id: string;
  position: number;
  gate_id: string;
  title: string | null;
  status: "passed" | "failed" | "inconclusive" | "waived";
  reason: string;
  evidence_refs: string;
}

export function makeEvaluationsStore(db: Db) {
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
      AND (@after IS NULL OR evaluation_id > @after)
      AND (@status IS NULL OR status = @status) AND (@kind IS NULL OR kind = @kind)
      AND (@metric_id IS NULL OR metric_id = @metric_id)
    ORDER BY evaluation_id LIMIT @limit`);
  const gatesOfRun = db.prepare("SELECT * FROM gate_results WHERE run_id = ? ORDER BY position");
  const countsOfRun = db.prepare("SELECT status, COUNT(*) AS n FROM evaluations WHERE run_id = ? GROUP BY status");
  // An evaluation an LLM judge answered for has `judge.usage` (JSON null when the answer reported none).
  const judgeUsageOf = db
    .prepare(
      `SELECT json_object('answers', COUNT(*),
        'answers_without_usage', COALESCE(SUM(json_type(judge, '$.usage') = 'null'), 0),
        'input_tokens', COALESCE(SUM(json_extract(judge, '$.usage.input_tokens')), 0),
        'output_tokens', COALESCE(SUM(json_extract(judge, '$.usage.output_tokens')), 0),
        'total_tokens', COALESCE(SUM(json_extract(judge, '$.usage.total_tokens')), 0))
      FROM evaluations WHERE run_id = ? AND json_type(judge, '$.usage') IS NOT NULL`,
    )
    .pluck();

  return {
    reads: {
      getEvaluation(runId: string, evaluationId: string): EvaluationRow | undefined {
        return evaluationById.get(runId, evaluationId) as EvaluationRow | undefined;
      },
      /** Ascending by id (= creation order), after the given id. */
      listEvaluations(
        runId: string,
        filter: { status?: string | undefined; kind?: string | undefined; metric_id?: string | undefined },
        after: string | undefined,
        limit: number,
      ): EvaluationRow[] {
        return evaluationsPage.all({
          run_id: runId,
          after: after ?? null,
          status: filter.status ?? null,
          kind: filter.kind ?? null,
          metric_id: filter.metric_id ?? null,
          limit,
        }) as EvaluationRow[];
      },
      /** What an LLM judge's answers reported of their tokens over the run's evaluations. */
      sumJudgeUsage(runId: string): JudgeUsage {
        return JSON.parse(judgeUsageOf.get(runId) as string) as JudgeUsage;
      },
      countEvaluations(runId: string): Record<EvaluationRow["status"], number> {
        const counts = { passed: 0, failed: 0, inconclusive: 0, errored: 0 };
        for (const { status, n } of countsOfRun.all(runId) as { status: EvaluationRow["status"]; n: number }[]) {
          counts[status] = n;
        }
        return counts;
      },
      listGateResults(runId: string): GateResultRow[] {
        return gatesOfRun.all(runId) as GateResultRow[];
      },
    },
    writes: {
      insertEvaluations(rows: readonly EvaluationRow[]): void {
        for (const row of rows) insertEvaluation.run(row);
      },
      insertGateResults(rows: readonly GateResultRow[]): void {
        for (const row of rows) insertGate.run(row);
      },
    },
  };
}
