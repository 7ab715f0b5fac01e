import type { IncomingHttpHeaders } from "node:http";
import type { Decision, WireMessage } from "../policy.js";

/** What a dialect writes an answer from. */
export interface AnswerFacts {
  /** Unique per answer: `7`, so `call_7`, `chatcmpl-7`, `resp_7`, `msg_7`. */
  serial: number;
  model: string;
  decision: Decision;
  /** Breaks the tool call's shape (the `invalid-tool-calls` behaviour). */
  invalidToolCall: boolean;
  /** Tokens as a model would report them; none with the `no-usage` behaviour. */
  usage: { input: number; output: number } | null;
}

/**
 * One API the example agent speaks: how its requests carry the conversation (read into the
 * Chat Completions form the agent's policy decides on) and how its answers are written.
 */
export interface Dialect {
  /** The conversation a request carries, or what is wrong with the request. */
  conversationOf(body: Record<string, unknown>, headers: IncomingHttpHeaders): WireMessage[] | string;
  answer(facts: AnswerFacts): unknown;
  /** A 2xx answer that breaks the API's contract (the `no-choices` behaviour). */
  hollowAnswer(serial: number): unknown;
}
