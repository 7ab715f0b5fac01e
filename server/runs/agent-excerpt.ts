import type { Evaluation } from "../contract/index.js";
import { toLoggedEvent } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import { toTurn } from "./read-models.js";

/** What the agent said and called where an evaluation looked: the evidence a reviewer reads first. */
export interface AgentExcerpt {
  conversation_id: string;
  scenario_id: string;
  repeat_index: number;
  /** The turn the evaluation judged; for a check of the whole conversation, its last turn. */
  turn: number | null;
  /** The agent's reply at that turn (null: it gave none). */
  reply: string | null;
  /** The tools it called: at that turn, or in the whole conversation for a check of the whole conversation. */
  tool_calls: { name: string; arguments_raw: string }[];
}

/**
 * The agent's reply and tool calls behind an evaluation of one conversation, read from its trace;
 * undefined for a run-wide evaluation (or one whose conversation is gone).
 */
export async function agentExcerpt(
  store: Pick<ServiceStore, "getConversation" | "listConversationEvents">,
  evaluation: Pick<Evaluation, "conversation_id" | "turn">,
): Promise<AgentExcerpt | undefined> {
  if (!evaluation.conversation_id) return undefined;
  const conversation = await store.getConversation(evaluation.conversation_id);
  if (!conversation) return undefined;
  const events = await store.listConversationEvents(conversation.conversation_id);
  const turns = events.map((event) => event.turn ?? 0).filter((turn) => turn > 0);
  const turn = evaluation.turn ?? (turns.length > 0 ? Math.max(...turns) : null);
  const reply =
    turn === null
      ? null
      : toTurn(
          conversation,
          turn,
          events.filter((event) => event.turn === turn),
        ).reply;
  const tool_calls = events
    .map(toLoggedEvent)
    .filter((event) => event.type === "tool.called" && (evaluation.turn === null || event.turn === evaluation.turn))
    .map((event) => {
      const data = event.data as { name: string; arguments_raw?: string; arguments?: unknown };
      return { name: data.name, arguments_raw: data.arguments_raw ?? JSON.stringify(data.arguments ?? {}) };
    });
  return {
    conversation_id: conversation.conversation_id,
    scenario_id: conversation.scenario_id,
    repeat_index: conversation.repeat_index,
    turn,
    reply,
    tool_calls,
  };
}

/** The excerpts of the given evaluations, by evaluation id (those with none left out). */
export async function agentExcerpts(
  store: Pick<ServiceStore, "getConversation" | "listConversationEvents">,
  evaluations: readonly Pick<Evaluation, "evaluation_id" | "conversation_id" | "turn">[],
): Promise<Map<string, AgentExcerpt>> {
  const excerpts = new Map<string, AgentExcerpt>();
  for (const evaluation of evaluations) {
    const excerpt = await agentExcerpt(store, evaluation);
    if (excerpt) excerpts.set(evaluation.evaluation_id, excerpt);
  }
  return excerpts;
}
