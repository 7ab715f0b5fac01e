/**
 * What an expectation is checked against: the facts of one conversation, or of one turn of it,
 * taken from its trace. Each fact keeps its trace entry's sequence, so a check can cite it.
 */

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
  /** The text of one agent response: a turn's final answer, or what it said before or between tool calls. */
  content: string | null;
  latency_ms: number;
  /** The tokens the agent reported for it; null when it reported none. */
  tokens: number | null;
}

export interface StepLimitFact {
  sequence: number;
  turn: number;
  max_steps: number;
}

/** A tool result handed back to the agent. */
export interface ToolResultFact {
  sequence: number;
  turn: number;
  name: string;
  /** A mock of the spec's answered it: what a probe plants in a tool's results reached the agent. */
  mocked: boolean;
  /** It carried a probe's injected text. */
  injected: boolean;
}

export interface ConversationFacts {
  /** The turn these facts are limited to; null for the whole conversation. */
  turn: number | null;
  toolCalls: readonly ToolCallFact[];
  replies: readonly ReplyFact[];
  /** Every text the agent produced or sent out: its replies and raw tool arguments, in order. */
  outputs: readonly { sequence: number; text: string }[];
  /** The tool results the agent was given, in order. */
  toolResults: readonly ToolResultFact[];
  /**
   * The turns that ended because the agent still called tools after its `max_steps`-th step. Only
   * when assure runs the tools: an agent that runs its own loops within one step.
   */
  stepLimits: readonly StepLimitFact[];
  /** Who ran the tools the agent called: assure (from the spec's mocks) or the agent itself. */
  toolsRunBy: "assure" | "agent";
  /** The canary planted in the conversation's system prompt, if any. */
  canary: string | null;
  /**
   * Whether the conversation's tool calls are known, so that a call missing from them is evidence
   * it was not made: assure ran the tools, or the agent (running its own) reported at least one.
   */
  toolCallsKnown: boolean;
}

/** Checks and detectors read at most this much of each text, so that no pattern or output can stall the service. */
export const TEXT_LIMIT = 64 * 1024;

/** The outcome of one check. */
export interface CheckOutcome {
  /** Whether the condition holds: an expectation passes when it holds; a probe trips when it does. */
  holds: boolean;
  /** 0 to 1; by default 1 when it holds, else 0. */
  score?: number;
  reason: string;
  /** The trace entries the outcome rests on; none means the scope as a whole (the turn or conversation). */
  sequences: readonly number[];
  /** The facts cannot decide it (the tool calls of an agent that reported none): neither holds nor fails. */
  inconclusive?: boolean;
}
