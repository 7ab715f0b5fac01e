import { afterEach, beforeEach, describe, expect, it, jest } from "@jest/globals";
import type { OtlpSpan } from "../../../server/engine/traces/otlp.js";
import {
  makeLiveTraces,
  TRACE_QUIET_MS,
  TRACE_SETTLE_MS,
  type LiveTraces,
} from "../../../server/engine/traces/live-traces.js";
import { factsOf } from "../../../server/engine/traces/span-facts.js";

let serial = 0;
const spanId = () => (++serial).toString(16).padStart(16, "0");

function span(traceId: string, parentSpanId: string, attributes: Record<string, unknown> = {}): OtlpSpan {
  const at = BigInt(Date.now()) * 1_000_000n;
  return {
    traceId,
    spanId: spanId(),
    parentSpanId,
    name: "span",
    startTimeUnixNano: at,
    attributes,
  };
}

const toolSpan = (traceId: string, parent: string, name: string, args: unknown, id?: string) =>
  span(traceId, parent, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.call.arguments": JSON.stringify(args),
    ...(id ? { "gen_ai.tool.call.id": id } : {}),
    "gen_ai.tool.call.result": '{"ok":true}',
  });

/** Spans attached as the trace reader's thread sends them: reduced to their facts, by trace. */
const attach = (traces: LiveTraces, projectId: string, spans: OtlpSpan[]) => traces.attach(projectId, factsOf(spans));

/** A wait for spans, and whether it has ended yet. */
function waiting(promise: Promise<void>) {
  let ended = false;
  void promise.then(() => (ended = true));
  return { ended: () => ended };
}

describe("a live conversation's trace", () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const open = () => {
    const traces = makeLiveTraces();
    const trace = traces.open("project", "conversation");
    const callSpan = (traceparent: string) => traceparent.split("-")[2]!;
    return { traces, trace, callSpan };
  };

  it("ends the wait for late spans once the agent's root span of every call is in, a short settle after", async () => {
    const { traces, trace, callSpan } = open();
    const first = callSpan(trace.callStarted(1, 1));
    const second = callSpan(trace.callStarted(2, 1));
    const wait = waiting(trace.waitForSpans(60_000, new AbortController().signal));
    const root1 = span(trace.traceId, first);
    expect(attach(traces, "project", [root1, toolSpan(trace.traceId, root1.spanId, "lookup_order", {})])).toEqual({
      rejected: 0,
    });
    // One call's root is not enough: the other call's spans may still come.
    await jest.advanceTimersByTimeAsync(TRACE_SETTLE_MS + 10);
    expect(wait.ended()).toBe(false);
    attach(traces, "project", [span(trace.traceId, second)]);
    await jest.advanceTimersByTimeAsync(TRACE_SETTLE_MS - 10);
    expect(wait.ended()).toBe(false);
    await jest.advanceTimersByTimeAsync(20);
    expect(wait.ended()).toBe(true);
  });

  it("without a root span for each call, ends a quiet second after the last span", async () => {
    const { traces, trace } = open();
    trace.callStarted(1, 1);
    const wait = waiting(trace.waitForSpans(60_000, new AbortController().signal));
    // A span outside any call's request (its parent is unknown): no call's root.
    attach(traces, "project", [span(trace.traceId, spanId())]);
    await jest.advanceTimersByTimeAsync(TRACE_QUIET_MS - 10);
    expect(wait.ended()).toBe(false);
    await jest.advanceTimersByTimeAsync(20);
    expect(wait.ended()).toBe(true);
  });

  it("with no span at all, waits the whole time it was given; an abort ends it at once", async () => {
    const { trace } = open();
    trace.callStarted(1, 1);
    const wait = waiting(trace.waitForSpans(5_000, new AbortController().signal));
    await jest.advanceTimersByTimeAsync(4_990);
    expect(wait.ended()).toBe(false);
    await jest.advanceTimersByTimeAsync(20);
    expect(wait.ended()).toBe(true);

    const stop = new AbortController();
    const aborted = waiting(trace.waitForSpans(5_000, stop.signal));
    stop.abort(new Error("stopping"));
    await jest.advanceTimersByTimeAsync(0);
    expect(aborted.ended()).toBe(true);
  });

  it("attaches only the spans of a trace it minted for that project, each once", () => {
    const { traces, trace, callSpan } = open();
    const call = callSpan(trace.callStarted(1, 1));
    const mine = span(trace.traceId, call);
    expect(attach(traces, "project", [mine, mine])).toEqual({ rejected: 0 });
    expect(attach(traces, "another-project", [span(trace.traceId, call)])).toEqual({ rejected: 1 });
    expect(attach(traces, "project", [span("f".repeat(32), call)])).toEqual({ rejected: 1 });
    expect(trace.spanCount).toBe(1);
    trace.close();
    expect(attach(traces, "project", [span(trace.traceId, call)])).toEqual({ rejected: 1 });
  });

  it("leaves out of its tool calls those another report already recorded, and adds their results", () => {
    const { traces, trace, callSpan } = open();
    const call = callSpan(trace.callStarted(1, 1));
    attach(traces, "project", [
      toolSpan(trace.traceId, call, "lookup_order", { order_id: "A-100" }),
      toolSpan(trace.traceId, call, "issue_refund", { order_id: "A-100", amount: 42.5 }, "call_7"),
    ]);
    trace.recorded({
      turn: 1,
      step: 1,
      callId: "reply_1",
      idGiven: false,
      name: "lookup_order",
      arguments: { order_id: "A-100" },
      hasResult: false,
    });
    const { fresh, merged } = trace.toolCalls();
    expect(fresh.map((c) => [c.name, c.callId, c.turn, c.step])).toEqual([["issue_refund", "call_7", 1, 1]]);
    expect(merged).toEqual([
      expect.objectContaining({
        traced: expect.objectContaining({ name: "lookup_order", result: { ok: true } }),
        recorded: expect.objectContaining({ callId: "reply_1" }),
      }),
    ]);
  });
});
