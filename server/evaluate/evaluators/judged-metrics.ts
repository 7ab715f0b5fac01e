import { scenarioCases } from "../../specs/scenario-cases.js";
import type { HeldConversation } from "../conversation-facts.js";
import { type EvaluationDraft, type Evaluator } from "../evaluator.js";
import { toTranscript } from "../transcript.js";

const PARALLEL_JUDGEMENTS = 4;

interface Sample {
  draft: Omit<EvaluationDraft, "score" | "status" | "reason">;
  criteria: string;
  held: HeldConversation;
  turn: number | null;
}

/**
 * Every metric of every scenario, scored by the LLM judge on every completed conversation (or
 * each of its turns, for a turn-scoped metric): one evaluation per sample. A sample the judge
 * answered outside its contract is inconclusive, never passed. Without a judge, nothing is
 * scored: the metric's gate says why it is inconclusive.
 */
export const judgedMetrics: Evaluator = {
  kind: "metric",
  async evaluate(input) {
    const { judge } = input;
    if (!judge) return { evaluations: [], findings: [] };
    const samples: Sample[] = [];
    for (const { index: s, id, scenario } of scenarioCases(input.spec)) {
      for (const [m, metric] of (scenario.metrics ?? []).entries()) {
        for (const held of await input.conversations.of("scenario", id)) {
          for (const turn of metric.scope === "turn" ? held.turns : [null]) {
            samples.push({
              criteria: metric.criteria,
              held,
              turn,
              draft: {
                metric_id: metric.id,
                scope: metric.scope,
                scenario_id: id,
                conversation_id: held.conversation.conversation_id,
                turn,
                spec_path: `scenarios[${s}].metrics[${m}]`,
                threshold: metric.threshold,
                judge: { ...judge.identity },
                evidence_refs: [turn === null ? held.ref.conversation() : held.ref.turn(turn)],
              },
            });
          }
        }
      }
    }

    const evaluations: EvaluationDraft[] = new Array(samples.length);
    let next = 0;
    async function work(): Promise<void> {
      while (next < samples.length) {
        const index = next++;
        const sample = samples[index]!;
        const answer = await judge!.judge(
          sample.criteria,
          toTranscript(await sample.held.events(), sample.turn ?? undefined),
          input.signal,
        );
        // What the judge's answer reported of its tokens, kept with who judged: reported apart from the agent's.
        const judged = { ...sample.draft, judge: { ...sample.draft.judge, usage: answer.usage ?? null } };
        evaluations[index] = answer.ok
          ? {
              ...judged,
              score: answer.score,
              status: answer.score >= sample.draft.threshold ? "passed" : "failed",
              reason: answer.reason,
            }
          : { ...judged, score: 0, status: "inconclusive", reason: `Not judged: ${answer.problem}` };
      }
    }
    await Promise.all(Array.from({ length: Math.min(PARALLEL_JUDGEMENTS, samples.length) }, work));
    return { evaluations, findings: [] };
  },
};
