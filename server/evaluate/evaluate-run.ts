import type { Pricing, TestSpecDocument } from "../contract/index.js";
import type { AgentUsage } from "../usage/agent-usage.js";
import type { NewId } from "../ids.js";
import type { ConversationSource } from "./conversation-source.js";
import { EVALUATORS } from "./evaluators/index.js";
import type { Evaluator } from "./evaluator.js";
import { decideGates, decideVerdict, type StoredEvaluation, type StoredFinding } from "./gates.js";
import type { Judge } from "./judges/llm-judge.js";

export interface EvaluateRunInput {
  runId: string;
  spec: TestSpecDocument;
  conversations: ConversationSource;
  judge: Judge | undefined;
  newId: NewId;
  signal: AbortSignal;
  evaluators?: readonly Evaluator[];
  usage?: AgentUsage | undefined;
  pricing?: Pricing | undefined;
}

/**
 * The evaluation of a run, from what its conversations did: every evaluator's evaluations and
 * findings, each gate's decision, and the verdict. Nothing is written here; the judge is the
 * only thing it reaches out to.
 */
export async function evaluateRun({
  runId,
  spec,
  conversations,
  judge,
  newId,
  signal,
  evaluators = EVALUATORS,
  usage,
  pricing,
}: EvaluateRunInput) {
  const input = { spec, conversations, judge, signal, usage, pricing };
  const outputs = await Promise.all(evaluators.map(async (evaluator) => evaluator.evaluate(input)));
  if (signal.aborted) throw signal.reason;
  const evaluations: StoredEvaluation[] = outputs.flatMap((output, i) =>
    output.evaluations.map((draft) => ({ ...draft, kind: evaluators[i]!.kind, evaluation_id: newId("evaluation") })),
  );
  const findings: StoredFinding[] = outputs
    .flatMap((o) => o.findings)
    .map((draft) => ({ ...draft, finding_id: newId("finding") }));
  const gates = decideGates(spec, runId, { evaluations, findings, judgeConfigured: judge !== undefined });
  return { evaluations, findings, gates, ...decideVerdict(gates) };
}

export type RunEvaluation = Awaited<ReturnType<typeof evaluateRun>>;
