import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import {
  evaluateConversations,
  type EvaluateConversationsDeps,
  type EvaluateConversationsOptions,
} from "./evaluate-conversations.js";
import type { Recorder } from "./recorder.js";
import { transitionRun } from "./transition-run.js";

export interface JudgeRunOptions extends EvaluateConversationsOptions {
  recorder: Recorder;
}

/**
 * Judges every completed conversation, in the plan's order, from its events read back once they
 * are durable (one conversation at a time: only their facts are kept). Evaluations, findings,
 * gates and the final status are written together: a crash before that leaves the run
 * EVALUATING, to be judged again.
 */
export async function judgeRun(
  deps: EvaluateConversationsDeps & { clock: Clock; log: Logger },
  { recorder, ...options }: JudgeRunOptions,
): Promise<void> {
  const { run } = options;
  await recorder.flush();
  const { status, verdict, findings, evaluations, gates } = await judgeConversations(deps, options);
  for (const f of findings) {
    recorder.record("finding.raised", {
      finding_id: f.finding_id,
      probe_id: f.probe_id,
      category: f.category,
      severity: f.severity,
    });
  }
  for (const e of evaluations) {
    recorder.record("evaluation.completed", {
      evaluation_id: e.evaluation_id,
      kind: e.kind,
      metric_id: e.metric_id,
      status: e.status,
      score: e.score,
    });
  }
  await transitionRun({ recorder, clock: deps.clock, log: deps.log }, run, status, {
    verdict,
    alsoWrite: [
      ["insertFindings", findings],
      ["insertEvaluations", evaluations],
      ["insertGateResults", gates],
    ],
  });
}

/**
 * The evaluation of the conversations, as the rows to store: what the conversations did, and
 * the evaluators' drafts, are no longer held once it returns (a run may have thousands).
 */
async function judgeConversations(
  deps: EvaluateConversationsDeps & { clock: Clock },
  options: EvaluateConversationsOptions,
) {
  const { run } = options;
  const { evaluations, findings, gates, status, verdict } = await evaluateConversations(deps, options);
  const createdAt = deps.clock.now().toISOString();
  return {
    status,
    verdict,
    findings: findings.map((f) => ({
      ...f,
      run_id: run.run_id,
      status: "open" as const,
      created_at: createdAt,
    })),
    evaluations: evaluations.map((e) => ({
      ...e,
      run_id: run.run_id,
      created_at: createdAt,
    })),
    gates: gates.map((gate, position) => ({
      ...gate,
      run_id: run.run_id,
      position,
    })),
  };
}
