import type { Run, TestSpecDocument } from "../contract/index.js";
import { toHeldConversation } from "../evaluate/conversation-facts.js";
import { lazyConversations } from "../evaluate/conversation-source.js";
import { evaluateRun } from "../evaluate/evaluate-run.js";
import type { Evaluator } from "../evaluate/evaluator.js";
import type { Judge } from "../evaluate/judges/llm-judge.js";
import type { NewId } from "../ids.js";
import { toLoggedEvent, type ConversationRow } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import { lastTries, planConversations, planKey } from "./plan.js";

export interface EvaluateConversationsDeps {
  store: Pick<ServiceStore, "listConversationEvents" | "measureAgentUsage" | "getRunPricing">;
  newId: NewId;
  /** The LLM judge for spec metrics, if one is configured. */
  judge?: Judge | undefined;
  /** The evaluator families every run gets; all of EVALUATORS unless given. */
  evaluators?: readonly Evaluator[] | undefined;
}

export interface EvaluateConversationsOptions {
  run: Run;
  spec: TestSpecDocument;
  signal: AbortSignal;
  /** The conversations to evaluate: completed, and durable (their events are read back). */
  completed: readonly ConversationRow[];
}

/**
 * Evaluates the completed conversations in the plan's order, each read back from the store. Of a
 * case tried again, the checks read the last try; the earlier ones stay in the evidence, and
 * what looks at everything the agent did (detectors, the budget) reads them too.
 */
export async function evaluateConversations(
  { store, newId, judge, evaluators }: EvaluateConversationsDeps,
  { run, spec, signal, completed }: EvaluateConversationsOptions,
) {
  const position = new Map<string, number>();
  for (const plan of planConversations(spec, { includeProbes: true })) position.set(planKey(plan), position.size);
  const eventsOf = async (conversationId: string) =>
    (await store.listConversationEvents(conversationId)).map(toLoggedEvent);
  const inOrder = [...completed].sort(
    (a, b) => position.get(planKey(a))! - position.get(planKey(b))! || a.retry - b.retry,
  );
  const counted = new Set(lastTries(completed));
  const conversations = lazyConversations(
    inOrder,
    async (c) => toHeldConversation(c, await eventsOf(c.conversation_id), () => eventsOf(c.conversation_id)),
    (c) => counted.has(c),
  );
  const budgeted = spec.defaults?.budget !== undefined;
  return evaluateRun({
    runId: run.run_id,
    spec,
    conversations,
    judge,
    newId,
    signal,
    ...(budgeted
      ? { usage: await store.measureAgentUsage(run.run_id), pricing: await store.getRunPricing(run.run_id) }
      : {}),
    ...(evaluators ? { evaluators } : {}),
  });
}
