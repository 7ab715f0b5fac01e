import type { TestSpecDocument } from "../contract/index.js";
import type { ConversationFacts } from "./conversation-facts.js";
import type { EvaluationDraft } from "./evaluate-expectations.js";
import type { Judge } from "./judges/llm-judge.js";
import { toTranscript } from "./transcript.js";

const PARALLEL_JUDGEMENTS = 4;

interface Sample {
  draft: Omit<EvaluationDraft, "score" | "status" | "reason">;
  criteria: string;
  transcript: string;
}

/**
 * Every LLM-judged metric of every scenario, on every completed conversation (or each of its
 * turns, for a turn-scoped metric): one evaluation per sample. A sample the judge answered
 * outside its contract is inconclusive, never passed.
 */
export async function judgeMetrics(
  spec: TestSpecDocument,
  conversations: readonly ConversationFacts[],
  judge: Judge,
  signal: AbortSignal,
): Promise<EvaluationDraft[]> {
  const samples: Sample[] = [];
  (spec.scenarios ?? []).forEach((scenario, s) => {
    (scenario.metrics ?? []).forEach((metric, m) => {
      for (const facts of conversations.filter((f) => f.conversation.kind === "scenario" && f.conversation.scenario_id === scenario.id)) {
        const turns = metric.scope === "turn" ? facts.turns : [null];
        for (const turn of turns) {
          samples.push({
            criteria: metric.criteria,
            transcript: toTranscript(facts.events, turn ?? undefined),
            draft: {
              metric_id: metric.id,
              scope: metric.scope,
              scenario_id: scenario.id,
              conversation_id: facts.conversation.conversation_id,
              turn,
              spec_path: `scenarios[${s}].metrics[${m}]`,
              threshold: metric.threshold,
              judge: { ...judge.identity },
              evidence_refs: [turn === null ? facts.ref.conversation() : facts.ref.turn(turn)],
            },
          });
        }
      }
    });
  });

  const results: EvaluationDraft[] = new Array(samples.length);
  let next = 0;
  async function work(): Promise<void> {
    while (next < samples.length) {
      const index = next++;
      const sample = samples[index]!;
      const answer = await judge.judge(sample.criteria, sample.transcript, signal);
      results[index] = answer.ok
        ? { ...sample.draft, score: answer.score, status: answer.score >= sample.draft.threshold ? "passed" : "failed", reason: answer.reason }
        : { ...sample.draft, score: 0, status: "inconclusive", reason: `Not judged: ${answer.problem}` };
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_JUDGEMENTS, samples.length) }, work));
  return results;
}
