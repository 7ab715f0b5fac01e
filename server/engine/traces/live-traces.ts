import { randomBytes } from "node:crypto";
import { notYetRecorded, type MergedToolCall, type RecordedToolCall, type TracedToolCall } from "./merge-calls.js";
import type { SpanFact, TraceFacts } from "./span-facts.js";
import type { ToolSpan } from "./tool-spans.js";

/** Spans kept per conversation at most: the rest of a trace is counted as rejected. */
export const MAX_SPANS_PER_CONVERSATION = 10_000;
/**
 * Without the agent's root span for every call, the wait for late spans ends this long after the
 * last one arrived (or at the trace_wait_ms, if sooner): an exporter sends a request's spans one
 * after another, and on a loaded machine a second may follow the first by several hundred milliseconds.
 */
export const TRACE_QUIET_MS = 1_000;
/**
 * Once the agent's root span of every call has arrived (a span whose parent is the call's own span
 * id: the span the agent opened for the request), the wait ends this long after the last span: an
 * agent ends a request's root span after the spans inside it, so they were handed to its exporter
 * first; this leaves room for exports sent at once that arrive out of order.
 */
export const TRACE_SETTLE_MS = 100;
/** How long the engine waits for spans after a conversation's last answer, unless its environment says. */
export const DEFAULT_TRACE_WAIT_MS = 5_000;

interface AgentCall {
  spanId: string;
  turn: number;
  step: number;
  /** Epoch ms, on the engine's clock. */
  startedAt: number;
  /** Whether the agent's root span for this call (its parent is the call's span) has arrived. */
  rooted: boolean;
}

/** The trace of one live conversation: its id, the calls made in it, the spans its agent exported. */
export interface ConversationTrace {
  readonly traceId: string;
  /** A new agent call: its W3C `traceparent`, under which the agent's spans for it are placed. */
  callStarted(turn: number, step: number): string;
  /** A tool call recorded from another report (the reply, MCP): the trace's report of it is not recorded again. */
  recorded(call: RecordedToolCall): void;
  /**
   * Waits for late spans, at most `maxMs`: until the agent's root span of every call arrived and
   * a short settle passed, or else until none came for a while (after at least one since the last call).
   */
  waitForSpans(maxMs: number, signal: AbortSignal): Promise<void>;
  /** Spans attached so far. */
  readonly spanCount: number;
  /**
   * The tool calls its spans tell, ordered by turn, step and start time: those no other report
   * recorded (`fresh`), and those it did (`merged`).
   */
  toolCalls(): { fresh: TracedToolCall[]; merged: MergedToolCall[] };
  /** No more spans are attached: the conversation ended. */
  close(): void;
}

export interface LiveTraces {
  /** Mints a trace for a conversation of `projectId` whose spans are attached while it is open. */
  open(projectId: string, conversationId: string): ConversationTrace;
  /** Attaches an export's spans (read by the trace reader) to the open traces of `projectId`; returns how many were not attached. */
  attach(projectId: string, traces: readonly TraceFacts[]): { rejected: number };
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();
/**
 * Calls `callback` when `signal` aborts; returns how to forget it. One listener per signal, however
 * many conversations of a run wait on it at once: an EventTarget's listeners are a list it walks on
 * every add and remove.
 */
function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = abortCallbacks.get(signal);
  if (!callbacks) {
    const all = new Set<() => void>();
    callbacks = all;
    abortCallbacks.set(signal, all);
    signal.addEventListener("abort", () => [...all].forEach((call) => call()), { once: true });
  }
  callbacks.add(callback);
  const registered = callbacks;
  return () => void registered.delete(callback);
}

/** In-process: the conversations this process holds are the live ones. */
export function makeLiveTraces(now: () => number = Date.now): LiveTraces {
  const open = new Map<string, { projectId: string; accept: (span: SpanFact) => boolean }>();

  return {
    open(projectId) {
      let traceId = hex(16);
      while (open.has(traceId)) traceId = hex(16);
      const calls = new Map<string, AgentCall>();
      // Of each span, only its parent is kept (where it belongs); of a tool span, the call it tells, read at once.
      const parents = new Map<string, string>();
      const tools: (ToolSpan & { parentSpanId: string })[] = [];
      const recordedCalls: RecordedToolCall[] = [];
      let unrooted = 0;
      let lastCallAt = 0;
      let lastSpanAt = 0;
      let closed = false;
      /** Told of each span attached: the wait, if one is under way, looks again. */
      let onSpan: (() => void) | undefined;

      const accept = (span: SpanFact): boolean => {
        if (closed || !span.spanId) return false;
        if (parents.has(span.spanId)) return true; // sent again: recorded once
        if (parents.size >= MAX_SPANS_PER_CONVERSATION) return false;
        parents.set(span.spanId, span.parentSpanId);
        if (span.tool) tools.push({ ...span.tool, parentSpanId: span.parentSpanId });
        const call = calls.get(span.parentSpanId);
        if (call && !call.rooted) {
          call.rooted = true;
          unrooted--;
        }
        lastSpanAt = now();
        onSpan?.();
        return true;
      };
      open.set(traceId, { projectId, accept });

      /** The call a span belongs to: the one its parent chain reaches, else the last one started before it. */
      function callOf(span: { parentSpanId: string; startTimeUnixNano: bigint }, ordered: readonly AgentCall[]) {
        let parent = span.parentSpanId;
        for (let depth = 0; parent && depth < 256; depth++) {
          const call = calls.get(parent);
          if (call) return call;
          parent = parents.get(parent) ?? "";
        }
        const startedAt = Number(span.startTimeUnixNano / 1_000_000n);
        return ordered.findLast((call) => call.startedAt <= startedAt) ?? ordered[0];
      }

      /** When the wait that started at `start` may end, as the spans that came so far tell. */
      function waitEndsAt(start: number, maxMs: number): number {
        let ends = start + maxMs;
        if (calls.size > 0 && unrooted === 0) ends = Math.min(ends, lastSpanAt + TRACE_SETTLE_MS);
        if (lastSpanAt > 0 && lastSpanAt >= lastCallAt) {
          ends = Math.min(ends, Math.max(lastSpanAt, start) + Math.min(TRACE_QUIET_MS, maxMs));
        }
        return ends;
      }

      return {
        traceId,
        callStarted(turn, step) {
          const spanId = hex(8);
          lastCallAt = now();
          calls.set(spanId, { spanId, turn, step, startedAt: lastCallAt, rooted: false });
          unrooted++;
          return `00-${traceId}-${spanId}-01`;
        },
        recorded(call) {
          recordedCalls.push(call);
        },
        waitForSpans(maxMs, signal) {
          const start = now();
          return new Promise<void>((resolve) => {
            let timer: NodeJS.Timeout | undefined;
            let forget: () => void = () => undefined;
            const done = () => {
              clearTimeout(timer);
              onSpan = undefined;
              forget();
              resolve();
            };
            // One timer, set for when the wait may end; each span that arrives moves it.
            function look() {
              if (signal.aborted || closed) return done();
              const wait = waitEndsAt(start, maxMs) - now();
              if (wait <= 0) return done();
              clearTimeout(timer);
              timer = setTimeout(look, wait);
            }
            onSpan = look;
            if (!signal.aborted) forget = onAbort(signal, look);
            look();
          });
        },
        get spanCount() {
          return parents.size;
        },
        toolCalls() {
          const ordered = [...calls.values()];
          const traced: TracedToolCall[] = [];
          for (const tool of tools) {
            const at = callOf(tool, ordered);
            if (at) traced.push({ ...tool, turn: at.turn, step: at.step });
          }
          traced.sort(
            (a, b) =>
              a.turn - b.turn ||
              a.step - b.step ||
              (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : 0),
          );
          return notYetRecorded(traced, recordedCalls);
        },
        close() {
          closed = true;
          open.delete(traceId);
          onSpan?.();
        },
      };
    },
    attach(projectId, traces) {
      let rejected = 0;
      for (const { traceId, spans } of traces) {
        const trace = open.get(traceId);
        if (!trace || trace.projectId !== projectId) {
          rejected += spans.length;
          continue;
        }
        for (const span of spans) if (!trace.accept(span)) rejected++;
      }
      return { rejected };
    },
  };
}
