import type { IncomingHttpHeaders } from "node:http";

/** How the example agent exports its spans: OTLP/HTTP to `endpoint` (`{ASSURE_BASE_URL}/otlp`), with a key holding traces:write. */
export interface AgentTracingOptions {
  /**
   * As `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to `{endpoint}/v1/traces`. Without it (and
   * `headers`) the exporter reads the standard `OTEL_EXPORTER_OTLP_*` variables itself.
   */
  endpoint?: string;
  /** As `OTEL_EXPORTER_OTLP_HEADERS`, e.g. `{ authorization: "Bearer …" }`. */
  headers?: Record<string, string>;
  /** protobuf (`@opentelemetry/exporter-trace-otlp-proto`, the default) or JSON (`-http`). */
  encoding?: "protobuf" | "json";
  gzip?: boolean;
  /**
   * How long ended spans wait to be exported together (the batch span processor's
   * `scheduledDelayMillis`): 100 ms by default, soon after each request (the SDK's own default is 5 s).
   */
  exportDelayMs?: number;
  /** Which attributes name the tool: the OpenTelemetry GenAI conventions (default) or OpenInference's. */
  conventions?: "genai" | "openinference";
}

/** A request's trace: a tool run inside it is a span, the request itself another. */
export interface RequestTrace {
  tool(name: string, args: unknown, run: () => Record<string, unknown>): Record<string, unknown>;
  end(): void;
}

export interface AgentTracing {
  /** Starts the request's span under the caller's `traceparent`, if it sent one. */
  request(headers: IncomingHttpHeaders): RequestTrace;
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK with the official OTLP exporter, spans exported in batches, and the
 * W3C trace context read from each request, so the agent's spans join its caller's trace.
 */
export async function startAgentTracing(options: AgentTracingOptions): Promise<AgentTracing> {
  const { ROOT_CONTEXT, trace, defaultTextMapGetter } = await import("@opentelemetry/api");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { CompressionAlgorithm } = await import("@opentelemetry/otlp-exporter-base");
  const config = {
    ...(options.endpoint ? { url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces` } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    compression: options.gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
  };
  const exporter =
    options.encoding === "json"
      ? new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter(config)
      : new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter(config);
  // Batched, as a deployed agent exports (one span an export would soon reach the exporter's limit of exports in flight).
  const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: options.exportDelayMs ?? 100 });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const tracer = provider.getTracer("assure-example-agent");
  const propagator = new W3CTraceContextPropagator();
  const openInference = options.conventions === "openinference";

  return {
    request(headers) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(
        "invoke_agent refunds",
        { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds" } },
        parent,
      );
      const inside = trace.setSpan(parent, span);
      return {
        tool(name, args, run) {
          const id = `call_${Math.random().toString(36).slice(2)}`;
          const toolSpan = tracer.startSpan(
            openInference ? name : `execute_tool ${name}`,
            {
              attributes: openInference
                ? { "openinference.span.kind": "TOOL", "tool.name": name, "input.value": JSON.stringify(args) }
                : {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": id,
                    "gen_ai.tool.call.arguments": JSON.stringify(args),
                  },
            },
            inside,
          );
          const result = run();
          toolSpan.setAttribute(openInference ? "output.value" : "gen_ai.tool.call.result", JSON.stringify(result));
          toolSpan.end();
          return result;
        },
        end: () => span.end(),
      };
    },
    shutdown: () => provider.shutdown(),
  };
}
