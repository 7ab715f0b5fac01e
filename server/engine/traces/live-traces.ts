import { randomBytes } from "node:crypto";
import type { OtlpSpan } from "./otlp.js";
import { toolCallOf, type ToolSpan } from "./tool-spans.js";

/** Spans kept per conversation at most: the rest of a trace is counted as rejected. */
export const MAX_SPANS_PER_CONVERSATION = 10_000;
/**
 * The wait for late spans ends this long after the last one arrived (or the trace_wait_ms, if
 * shorter): an exporter sends a request's spans one after another, and on a loaded machine a
 * second may follow the first by several hundred milliseconds.
 */
export const TRACE_QUIET_MS = 1_000;
/** How long the engine waits for spans after a conversation's last answer, unless its environment says. */
export const DEFAULT_TRACE_WAIT_MS = 5_000;

/** A tool call read from the conversation's trace, placed at the agent call it belongs to. */
export interface TracedToolCall extends ToolSpan {
  turn: number;
  step: number;
}

interface AgentCall {
  spanId: string;
  turn: number;
  step: number;
  /** Epoch ms, on the engine's clock. */
  startedAt: number;
}

/** The trace of one live conversation: its id, the calls made in it, the spans its agent exported. */
export interface ConversationTrace {
  readonly traceId: string;
  /** A new agent call: its W3C `traceparent`, under which the agent's spans for it are placed. */
  callStarted(turn: number, step: number): string;
  /** Waits for late spans: until none came for a short while (after at least one since the last call), or `maxMs`. */
  waitForSpans(maxMs: number, signal: AbortSignal): Promise<void>;
  /** Spans attached so far. */
  readonly spanCount: number;
  /** The tool calls its spans tell, ordered by turn, step and start time. */
  toolCalls(): TracedToolCall[];
  /** No more spans are attached: the conversation ended. */
  close(): void;
}

export interface LiveTraces {
  /** Mints a trace for a conversation of `projectId` whose spans are attached while it is open. */
  open(projectId: string, conversationId: string): ConversationTrace;
  /** Attaches exported spans to the open traces of `projectId`; returns how many were not attached. */
  attach(projectId: string, spans: readonly OtlpSpan[]): { rejected: number };
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** In-process: the conversations this process holds are the live ones. */
export function makeLiveTraces(now: () => number = Date.now): LiveTraces {
  const open = new Map<string, { projectId: string; accept: (span: OtlpSpan) => boolean }>();

  return {
    open(projectId) {
      let traceId = hex(16);
      while (open.has(traceId)) traceId = hex(16);
      const calls: AgentCall[] = [];
      const spans = new Map<string, OtlpSpan>();
      let lastCallAt = 0;
      let lastSpanAt = 0;
      let closed = false;

      const accept = (span: OtlpSpan): boolean => {
        if (closed || !span.spanId) return false;
        if (spans.has(span.spanId)) return true; // sent again: recorded once
        if (spans.size >= MAX_SPANS_PER_CONVERSATION) return false;
        spans.set(span.spanId, span);
        lastSpanAt = now();
        return true;
      };
      open.set(traceId, { projectId, accept });

      /** The call a span belongs to: the one its parent chain reaches, else the last one started before it. */
      function callOf(span: OtlpSpan): AgentCall | undefined {
        const bySpan = new Map(calls.map((call) => [call.spanId, call]));
        let parent = span.parentSpanId;
        for (let depth = 0; parent && depth < 256; depth++) {
          const call = bySpan.get(parent);
          if (call) return call;
          parent = spans.get(parent)?.parentSpanId ?? "";
        }
        const startedAt = Number(span.startTimeUnixNano / 1_000_000n);
        return calls.findLast((call) => call.startedAt <= startedAt) ?? calls[0];
      }

      return {
        traceId,
        callStarted(turn, step) {
          const spanId = hex(8);
          lastCallAt = now();
          calls.push({ spanId, turn, step, startedAt: lastCallAt });
          return `00-${traceId}-${spanId}-01`;
        },
        async waitForSpans(maxMs, signal) {
          const start = now();
          const quietMs = Math.min(TRACE_QUIET_MS, maxMs);
          while (!signal.aborted && !closed) {
            const at = now();
            if (at - start >= maxMs) return;
            if (lastSpanAt >= lastCallAt && lastSpanAt > 0 && at - Math.max(lastSpanAt, start) >= quietMs) return;
            await sleep(Math.min(25, maxMs - (at - start)));
          }
        },
        get spanCount() {
          return spans.size;
        },
        toolCalls() {
          const traced: TracedToolCall[] = [];
          for (const span of spans.values()) {
            const call = toolCallOf(span);
            const at = call && callOf(span);
            if (call && at) traced.push({ ...call, turn: at.turn, step: at.step });
          }
          return traced.sort(
            (a, b) =>
              a.turn - b.turn ||
              a.step - b.step ||
              (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : 0),
          );
        },
        close() {
          closed = true;
          open.delete(traceId);
        },
      };
    },
    attach(projectId, exported) {
      let rejected = 0;
      for (const span of exported) {
        const trace = open.get(span.traceId);
        if (!trace || trace.projectId !== projectId || !trace.accept(span)) rejected++;
      }
      return { rejected };
    },
  };
}
