import { afterAll, describe, expect, it } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import {
  MAX_OTLP_BODY_BYTES,
  MAX_SPANS_PER_EXPORT,
  readTraceExport,
} from "../../../server/trace-reader/read-export.js";
import { startTraceReader, TraceReaderBusy } from "../../../server/trace-reader/trace-reader.js";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** An export of the OpenTelemetry SDK, by its own protobuf serializer: a tool span (GenAI conventions) under an agent span. */
async function sdkExport() {
  const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
    await import("@opentelemetry/sdk-trace-base");
  const { context, trace } = await import("@opentelemetry/api");
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("agent");
  const agent = tracer.startSpan("invoke_agent");
  const tool = tracer.startSpan(
    "execute_tool lookup_order",
    {
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"order_id":"A-100"}',
        "gen_ai.tool.call.result": '{"status":"delivered"}',
      },
    },
    trace.setSpan(context.active(), agent),
  );
  tool.end();
  agent.end();
  const bytes = ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!;
  await provider.shutdown();
  return {
    bytes,
    traceId: agent.spanContext().traceId,
    agentId: agent.spanContext().spanId,
    toolId: tool.spanContext().spanId,
  };
}

const jsonExport = (spans: object[]) => Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));

describe("reading an OTLP export", () => {
  it("reduces the SDK's protobuf export to its facts by trace: span ids, parents, the tool call", async () => {
    const { bytes, traceId, agentId, toolId } = await sdkExport();
    for (const [body, encoding] of [
      [bytes, "identity"],
      [gzipSync(bytes), "gzip"],
    ] as const) {
      const read = readTraceExport(body, "protobuf", encoding);
      expect(read).toEqual({
        ok: true,
        spans: 2,
        overflow: 0,
        traces: [
          {
            traceId,
            spans: [
              {
                spanId: toolId,
                parentSpanId: agentId,
                tool: expect.objectContaining({
                  spanId: toolId,
                  callId: "call_1",
                  callIdGiven: true,
                  name: "lookup_order",
                  arguments: { order_id: "A-100" },
                  result: { status: "delivered" },
                  startTimeUnixNano: expect.any(BigInt),
                }),
              },
              { spanId: agentId, parentSpanId: "" },
            ],
          },
        ],
      });
    }
  });

  it("groups OTLP/JSON spans by trace, an invalid id as none; counts spans past the export's limit apart", () => {
    const [a, b] = [hex(16), hex(16)];
    const span = (traceId: string) => ({ traceId, spanId: hex(8), name: "x", startTimeUnixNano: "1" });
    const read = readTraceExport(jsonExport([span(a), span(b), span(a), span("zz")]), "json", "identity");
    expect(read.ok && read.traces.map((t) => [t.traceId, t.spans.length])).toEqual([
      [a, 2],
      [b, 1],
      ["", 1],
    ]);
    const many = readTraceExport(
      jsonExport(Array.from({ length: MAX_SPANS_PER_EXPORT + 3 }, () => span(a))),
      "json",
      "identity",
    );
    expect(many).toMatchObject({ ok: true, spans: MAX_SPANS_PER_EXPORT, overflow: 3 });
  });

  it("refuses what is not an export, not gzip, or larger than 4 MiB unzipped", () => {
    expect(readTraceExport(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), "protobuf", "identity")).toMatchObject({
      ok: false,
      code: "VALIDATION_FAILED",
    });
    expect(readTraceExport(Buffer.from("[1]"), "json", "identity")).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(readTraceExport(Buffer.from("x"), "json", "gzip")).toMatchObject({ code: "VALIDATION_FAILED" });
    const bomb = gzipSync(Buffer.alloc(MAX_OTLP_BODY_BYTES + 1, 0x20));
    expect(readTraceExport(bomb, "json", "gzip")).toMatchObject({ ok: false, code: "PAYLOAD_TOO_LARGE" });
  });
});

describe("the trace reader's thread", () => {
  const body = jsonExport([{ traceId: hex(16), spanId: hex(8), name: "x", startTimeUnixNano: "1" }]);
  const reader = startTraceReader({ maxPendingBytes: 2 * body.byteLength });
  afterAll(() => reader.close());

  it("reads on its thread what the function reads in place", async () => {
    expect(await reader.read(body, "json", "identity")).toEqual(readTraceExport(body, "json", "identity"));
    expect(await reader.read(gzipSync(Buffer.from("{")), "json", "gzip")).toMatchObject({
      ok: false,
      code: "VALIDATION_FAILED",
    });
  });

  it("refuses an export at once while the bytes being read would pass its bound, and takes exports again once they are read", async () => {
    const first = reader.read(body, "json", "identity");
    const second = reader.read(body, "json", "identity");
    await expect(reader.read(body, "json", "identity")).rejects.toBeInstanceOf(TraceReaderBusy);
    expect((await Promise.all([first, second])).map((read) => read.ok)).toEqual([true, true]);
    expect(await reader.read(body, "json", "identity")).toMatchObject({ ok: true, spans: 1 });
  });
});
