// Agents' OTLP trace exports, made as the OpenTelemetry SDK makes them, and a client loop that
// posts them, for the traces part of the bench (bench/traces.js).
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { percentile } from "./statistics.js";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = root.opentelemetry.proto.collector.trace.v1;

/**
 * The spans of agent requests, each request's in `slicesPerTrace` slices of `spansPerSlice`:
 * GenAI tool and chat spans and HTTP client spans under the request's `invoke_agent` span, which
 * ends last (in the last slice), all under the caller's `traceparent`; and exports of such slices.
 *
 * The spans are made once with the OpenTelemetry SDK and serialized by its ProtobufTraceSerializer,
 * exactly as the official OTLP/HTTP protobuf exporter sends them; each request's spans are those,
 * with the request's own trace and span ids, encoded by the same package's generated encoder.
 * (Making every span through the SDK costs about 40 µs: the bench's own client would then be the
 * bottleneck.)
 */
export async function makeSpanFactory({ spansPerSlice, slicesPerTrace }) {
  const { ROOT_CONTEXT, SpanKind, trace, defaultTextMapGetter } = await import("@opentelemetry/api");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
    await import("@opentelemetry/sdk-trace-base");
  const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("bench-agent", "1.0.0");

  function child(inside, index) {
    if (index === 0) {
      return tracer.startSpan(
        "execute_tool lookup_order",
        {
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.arguments": '{"order_id":"A-100"}',
            "gen_ai.tool.call.result": '{"order_id":"A-100","status":"delivered","amount":42.5}',
          },
        },
        inside,
      );
    }
    if (index % 2 === 1) {
      return tracer.startSpan(
        "chat refund-model",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "refund-model",
            "gen_ai.usage.input_tokens": 412,
            "gen_ai.usage.output_tokens": 38,
          },
        },
        inside,
      );
    }
    return tracer.startSpan(
      "POST",
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "http.request.method": "POST",
          "url.full": "https://models.example/v1/chat/completions",
          "http.response.status_code": 200,
        },
      },
      inside,
    );
  }

  // One request made through the SDK: a middle export's spans, and the last one's (with the request's span).
  const parent = new W3CTraceContextPropagator().extract(
    ROOT_CONTEXT,
    { traceparent: randomTraceparent() },
    defaultTextMapGetter,
  );
  const requestSpan = tracer.startSpan(
    "invoke_agent refunds",
    { kind: SpanKind.SERVER, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds" } },
    parent,
  );
  const inside = trace.setSpan(parent, requestSpan);
  const serialized = (last) => {
    for (let i = 0; i < spansPerSlice - (last ? 1 : 0); i++) child(inside, i).end();
    if (last) requestSpan.end();
    const bytes = ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans());
    memory.reset();
    return ExportTraceServiceRequest.decode(bytes);
  };
  const templates = { middle: serialized(false), last: serialized(true) };
  await provider.shutdown();

  const [resourceSpans] = templates.middle.resourceSpans;
  const [scopeSpans] = resourceSpans.scopeSpans;
  const spansOf = (template) => template.resourceSpans[0].scopeSpans[0].spans;

  /** A slice of the template's spans with this request's ids: under the request's span, that under the caller. */
  function sliceOf(template, ids, callCount) {
    const fresh = randomBytes(8 * spansOf(template).length);
    return spansOf(template).map((span, i) => {
      const isRequest = span.name === "invoke_agent refunds";
      // Each tool call has an id of its own, as an agent's would.
      const attributes =
        span.name === "execute_tool lookup_order"
          ? [...span.attributes, { key: "gen_ai.tool.call.id", value: { stringValue: `call_${callCount}` } }]
          : span.attributes;
      return {
        ...span,
        traceId: ids.traceId,
        spanId: isRequest ? ids.requestSpanId : fresh.subarray(8 * i, 8 * i + 8),
        parentSpanId: isRequest ? ids.callSpanId : ids.requestSpanId,
        attributes,
      };
    });
  }

  let calls = 0;
  return {
    /** The slices of one request made under `traceparent`, one after another; undefined once all are made. */
    trace(traceparent) {
      const [, traceId, callSpanId] = traceparent.split("-");
      const ids = {
        traceId: Buffer.from(traceId, "hex"),
        callSpanId: Buffer.from(callSpanId, "hex"),
        requestSpanId: randomBytes(8),
      };
      let made = 0;
      return {
        next() {
          if (made === slicesPerTrace) return undefined;
          const last = ++made === slicesPerTrace;
          return sliceOf(last ? templates.last : templates.middle, ids, ++calls);
        },
      };
    },
    /** One export of these slices (of one or several requests), as the agent's exporter sends it. */
    encode(slices) {
      const message = { resourceSpans: [{ ...resourceSpans, scopeSpans: [{ ...scopeSpans, spans: slices.flat() }] }] };
      return Buffer.from(ExportTraceServiceRequest.encode(message).finish());
    },
  };
}

/** A traceparent of a trace no conversation was sent (for a receiver that does not care). */
export const randomTraceparent = () => `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;

/**
 * The exports to post: each holds a slice of each of `slicesPerExport` requests' traces (as a batch
 * span processor's export holds the spans of the requests it served meanwhile). Up to `width`
 * requests' traces are open at once, taken in turn, each new one from `traceparents.shift()`;
 * `onComplete(traceparent)` once every slice of a request's trace was answered. Counts the spans
 * sent, answered, and rejected (partialSuccess).
 */
export function exportFeed({
  factory,
  width,
  slicesPerTrace,
  slicesPerExport,
  spansPerSlice,
  traceparents,
  onComplete,
}) {
  const open = [];
  let turn = 0;
  const counts = { sentSpans: 0, answeredSpans: 0, rejectedSpans: 0 };
  return {
    counts,
    /** The next export to post, with the requests it holds slices of; undefined while none is open. */
    take() {
      while (open.length < width) {
        const traceparent = traceparents.shift();
        if (!traceparent) break;
        open.push({ traceparent, slices: factory.trace(traceparent), sent: 0, answered: 0 });
      }
      if (open.length === 0) return undefined;
      const tickets = [];
      const slices = [];
      for (let i = 0; i < slicesPerExport && open.length > 0; i++) {
        const index = turn++ % open.length;
        const ticket = open[index];
        slices.push(ticket.slices.next());
        tickets.push(ticket);
        if (++ticket.sent === slicesPerTrace) open.splice(index, 1); // its last slice (with its root span) is out
      }
      counts.sentSpans += slices.length * spansPerSlice;
      return { body: factory.encode(slices), tickets };
    },
    answered(tickets, rejectedSpans) {
      counts.answeredSpans += tickets.length * spansPerSlice;
      counts.rejectedSpans += rejectedSpans;
      for (const ticket of tickets) if (++ticket.answered === slicesPerTrace) onComplete?.(ticket.traceparent);
    },
  };
}

/**
 * Posts exports to `{url}/otlp/v1/traces` from `connections` concurrent loops for `seconds`, at
 * `rate` exports a second in all (else as fast as they are answered). Each answer's latency is from
 * when its request was due (so a slow answer that delays the next is counted in full).
 */
export async function postExports({ url, token, feed, spansPerSlice, seconds, connections, rate }) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(`${url}/otlp/v1/traces`);
  const latenciesMs = [];
  let unexpected = 0;
  let errors = 0;
  let spans = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  let scheduled = 0;

  const post = (body) =>
    new Promise((resolve) => {
      const req = request(
        target,
        {
          method: "POST",
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/x-protobuf",
            "content-length": body.length,
          },
        },
        (res) => {
          const chunks = [];
          res.on("data", (chunk) => chunks.push(chunk));
          res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
          res.on("error", () => resolve({ status: 0 }));
        },
      );
      req.on("error", () => resolve({ status: 0 }));
      req.setTimeout(10_000, () => req.destroy());
      req.end(body);
    });

  async function loop() {
    for (;;) {
      let due = performance.now();
      if (rate) {
        due = started + (scheduled++ / rate) * 1000;
        if (due >= end) return;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      if (performance.now() >= end) return;
      const item = feed.take();
      if (!item?.body) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        continue;
      }
      const answer = await post(item.body);
      if (answer.status === 0) {
        errors++;
        continue;
      }
      latenciesMs.push(performance.now() - due);
      spans += item.tickets.length * spansPerSlice;
      if (answer.status !== 200) {
        unexpected++;
        continue;
      }
      const { partialSuccess } = ExportTraceServiceResponse.decode(answer.body);
      feed.answered(item.tickets, Number(partialSuccess?.rejectedSpans ?? 0));
    }
  }
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  return { latenciesMs, spans, seconds: (performance.now() - started) / 1000, unexpected, errors };
}

/** Slices of one target as one measurement. */
export function summarizeExports(slices) {
  const latencies = Float64Array.from(slices.flatMap((slice) => slice.latenciesMs)).sort();
  const seconds = slices.reduce((sum, slice) => sum + slice.seconds, 0);
  const cpuMs = slices.reduce((sum, slice) => sum + slice.cpuMs, 0);
  const spans = slices.reduce((sum, slice) => sum + slice.spans, 0);
  return {
    exports: latencies.length,
    spansPerSecond: spans / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    cpuUsPerSpan: (cpuMs * 1000) / spans,
    unexpected: slices.reduce((sum, slice) => sum + slice.unexpected, 0),
    errors: slices.reduce((sum, slice) => sum + slice.errors, 0),
  };
}
