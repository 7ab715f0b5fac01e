import { conversationPath, tracePath, turnPath } from "../contract/index.js";
import type { ConversationFacts, ReplyFact, StepLimitFact, ToolCallFact, ToolResultFact } from "../specs/facts.js";
import type { ConversationRow, LoggedEvent } from "../store/index.js";

/**
 * A conversation the run held, as evaluators see it: its row, its events, the facts checks read,
 * and the API paths that evaluations cite as evidence.
 */
export interface HeldConversation {
  conversation: ConversationRow;
  /** The conversation's events, in order: read again when asked for (a judge's transcript), not kept. */
  events(): Promise<readonly LoggedEvent[]>;
  /** Its user turns, from 1. */
  turns: readonly number[];
  /** The facts of the whole conversation. */
  facts: ConversationFacts;
  /** The facts of one turn. */
  inTurn(turn: number): ConversationFacts;
  ref: {
    event(sequence: number): string;
    turn(turn: number): string;
    conversation(): string;
  };
}

/**
 * What evaluators need of a conversation, from its events; `readEvents` gives them again when
 * asked for (default: these), so that a run of thousands of conversations keeps only their facts.
 */
export function toHeldConversation(
  conversation: ConversationRow,
  events: readonly LoggedEvent[],
  readEvents: () => Promise<readonly LoggedEvent[]> = async () => events,
): HeldConversation {
  const runId = conversation.run_id;
  const toolCalls: ToolCallFact[] = [];
  const replies: ReplyFact[] = [];
  const outputs: { sequence: number; text: string; turn: number }[] = [];
  const stepLimits: StepLimitFact[] = [];
  const toolResults: ToolResultFact[] = [];
  const turns = new Set<number>();
  let toolsRunBy: "assure" | "agent" = "assure";
  /** Whether the agent showed its tool calls reach assure: its trace arrived, or it listed the mocked tools over MCP. */
  let reporting = false;
  for (const event of events) {
    if (event.turn !== null && event.turn > 0) turns.add(event.turn);
    const { sequence } = event;
    if (event.type === "conversation.started") {
      toolsRunBy = event.data.tools_run_by ?? "assure";
    } else if (event.type === "trace.received") {
      reporting ||= event.data.spans > 0;
    } else if (event.type === "tools.listed") {
      reporting = true;
    } else if (event.type === "tool.called") {
      const { data } = event;
      toolCalls.push({
        sequence,
        turn: data.turn,
        name: data.name,
        arguments: data.arguments_error === undefined ? data.arguments : undefined,
        arguments_raw: data.arguments_raw,
      });
      outputs.push({ sequence, text: data.arguments_raw, turn: data.turn });
    } else if (event.type === "tool.returned") {
      const { data } = event;
      const mocked = data.source.kind === "when" || data.source.kind === "default";
      toolResults.push({ sequence, turn: data.turn, name: data.name, mocked, injected: data.injected });
    } else if (event.type === "message.received") {
      const { data } = event;
      replies.push({
        sequence,
        turn: data.turn,
        content: data.content,
        latency_ms: data.latency_ms,
        tokens: data.usage?.total_tokens ?? null,
      });
      if (data.content) outputs.push({ sequence, text: data.content, turn: data.turn });
    } else if (event.type === "turn.step_limit_reached") {
      stepLimits.push({ sequence, turn: event.data.turn, max_steps: event.data.max_steps });
    }
  }
  // An agent that runs its own tools and reported none: a missing call is no evidence (unless its reporting is shown to work).
  const toolCallsKnown = toolsRunBy === "assure" || toolCalls.length > 0 || reporting;
  const facts: ConversationFacts = {
    turn: null,
    toolCalls,
    replies,
    outputs,
    toolResults,
    stepLimits,
    toolsRunBy,
    canary: conversation.canary,
    toolCallsKnown,
  };
  const inTurn = (turn: number): ConversationFacts => ({
    turn,
    toolCalls: toolCalls.filter((call) => call.turn === turn),
    replies: replies.filter((reply) => reply.turn === turn),
    outputs: outputs.filter((output) => output.turn === turn),
    toolResults: toolResults.filter((result) => result.turn === turn),
    stepLimits: stepLimits.filter((limit) => limit.turn === turn),
    toolsRunBy,
    canary: conversation.canary,
    toolCallsKnown,
  });
  return {
    conversation,
    events: readEvents,
    turns: [...turns].sort((a, b) => a - b),
    facts,
    inTurn,
    ref: {
      event: (sequence) => tracePath(runId, sequence),
      turn: (turn) => turnPath(runId, conversation.conversation_id, turn),
      conversation: () => conversationPath(runId, conversation.conversation_id),
    },
  };
}

/** The evidence of a check's outcome: the trace entries it names, or else the turn or conversation it looked at. */
export function refsOf(held: HeldConversation, facts: ConversationFacts, sequences: readonly number[]): string[] {
  if (sequences.length > 0) return sequences.map(held.ref.event);
  return [facts.turn === null ? held.ref.conversation() : held.ref.turn(facts.turn)];
}
