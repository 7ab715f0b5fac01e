import { conversationPath, tracePath, turnPath } from "../contract/index.js";
import type { ConversationRow, LoggedEvent } from "../store/index.js";

export interface ToolCallFact {
  sequence: number;
  turn: number;
  name: string;
  /** undefined when the agent's arguments did not parse as a JSON object. */
  arguments: Record<string, unknown> | undefined;
  arguments_raw: string;
}

export interface ReplyFact {
  sequence: number;
  turn: number;
  content: string | null;
  has_tool_calls: boolean;
  latency_ms: number;
}

/**
 * What happened in one conversation, taken from its logged events: the only input evaluators
 * get, so every verdict can point at the trace entries it rests on.
 */
export interface ConversationFacts {
  run_id: string;
  conversation: ConversationRow;
  /** The conversation's events, in order. */
  events: readonly LoggedEvent[];
  turns: number[];
  toolCalls: ToolCallFact[];
  replies: ReplyFact[];
  /** Every text the agent produced or sent out: replies and raw tool arguments, with where. */
  outputs: { sequence: number; text: string }[];
  ref: {
    event(sequence: number): string;
    turn(turn: number): string;
    conversation(): string;
  };
}

export function toConversationFacts(conversation: ConversationRow, events: readonly LoggedEvent[]): ConversationFacts {
  const runId = conversation.run_id;
  const toolCalls: ToolCallFact[] = [];
  const replies: ReplyFact[] = [];
  const turns = new Set<number>();
  for (const event of events) {
    const { data } = event;
    if (event.turn !== null && event.turn > 0) turns.add(event.turn);
    if (event.type === "tool.called") {
      toolCalls.push({
        sequence: event.sequence,
        turn: event.turn ?? 0,
        name: String(data.name),
        arguments: data.arguments_error === undefined ? (data.arguments as Record<string, unknown>) : undefined,
        arguments_raw: String(data.arguments_raw ?? ""),
      });
    } else if (event.type === "message.received") {
      replies.push({
        sequence: event.sequence,
        turn: event.turn ?? 0,
        content: typeof data.content === "string" ? data.content : null,
        has_tool_calls: Array.isArray(data.tool_calls) && data.tool_calls.length > 0,
        latency_ms: Number(data.latency_ms ?? 0),
      });
    }
  }
  const outputs = [
    ...replies.filter((r) => r.content).map((r) => ({ sequence: r.sequence, text: r.content! })),
    ...toolCalls.map((c) => ({ sequence: c.sequence, text: c.arguments_raw })),
  ].sort((a, b) => a.sequence - b.sequence);
  return {
    run_id: runId,
    conversation,
    events,
    turns: [...turns].sort((a, b) => a - b),
    toolCalls,
    replies,
    outputs,
    ref: {
      event: (sequence) => tracePath(runId, sequence),
      turn: (turn) => turnPath(runId, conversation.conversation_id, turn),
      conversation: () => conversationPath(runId, conversation.conversation_id),
    },
  };
}

/** The facts of one turn only, for expectations written under a turn. */
export function onlyTurn(facts: ConversationFacts, turn: number): ConversationFacts {
  return {
    ...facts,
    turns: [turn],
    toolCalls: facts.toolCalls.filter((c) => c.turn === turn),
    replies: facts.replies.filter((r) => r.turn === turn),
    outputs: facts.outputs.filter((o) => facts.replies.some((r) => r.sequence === o.sequence && r.turn === turn) || facts.toolCalls.some((c) => c.sequence === o.sequence && c.turn === turn)),
  };
}
