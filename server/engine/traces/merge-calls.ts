import canonicalize from "canonicalize";
import type { ToolSpan } from "./tool-spans.js";

/** A tool call read from the conversation's trace, placed at the agent call it belongs to. */
export interface TracedToolCall extends ToolSpan {
  turn: number;
  step: number;
}

/** A tool call already recorded from another report of the agent's (its reply, a call over MCP). */
export interface RecordedToolCall {
  turn: number;
  step: number;
  callId: string;
  /** Whether the agent named the call (else assure gave it its id). */
  idGiven: boolean;
  name: string;
  arguments: Record<string, unknown>;
  /** Whether its result was recorded too. */
  hasResult: boolean;
}

/** A traced tool call that another report already recorded: what the trace adds to it. */
export interface MergedToolCall {
  traced: TracedToolCall;
  recorded: RecordedToolCall;
}

/** Arguments compared as canonical JSON (keys in order); text no canonical form takes is compared as it is. */
function argumentsKey(args: Record<string, unknown>): string {
  try {
    return canonicalize(args) ?? "";
  } catch {
    return JSON.stringify(args);
  }
}

/**
 * The traced calls split into those no other report recorded (`fresh`, in their order) and those
 * it did (`merged`): the same call is the one the agent gave the same id in both reports, or,
 * where one report has no id of the agent's, the one of the same name and arguments in the same
 * turn. Each recorded call matches one traced call at most, so a call made twice is kept twice.
 */
export function notYetRecorded(
  traced: readonly TracedToolCall[],
  recorded: readonly RecordedToolCall[],
): { fresh: TracedToolCall[]; merged: MergedToolCall[] } {
  const left = [...recorded];
  const merged: MergedToolCall[] = [];
  const take = (call: TracedToolCall, index: number) => {
    merged.push({ traced: call, recorded: left[index]! });
    left.splice(index, 1);
  };
  const unnamed: TracedToolCall[] = [];
  for (const call of traced) {
    const index = call.callIdGiven
      ? left.findIndex((r) => r.idGiven && r.callId === call.callId && r.name === call.name)
      : -1;
    if (index >= 0) take(call, index);
    else unnamed.push(call);
  }
  if (left.length === 0) return { fresh: unnamed, merged };
  const fresh: TracedToolCall[] = [];
  for (const call of unnamed) {
    const key = argumentsKey(call.arguments);
    const index = left.findIndex(
      (r) =>
        (!r.idGiven || !call.callIdGiven) &&
        r.turn === call.turn &&
        r.name === call.name &&
        argumentsKey(r.arguments) === key,
    );
    if (index >= 0) take(call, index);
    else fresh.push(call);
  }
  return { fresh, merged };
}
