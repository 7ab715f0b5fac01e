import type { OtlpSpan } from "./otlp.js";
import { toolCallOf, type ToolSpan } from "./tool-spans.js";

/** What a live conversation keeps of one span: where it belongs, and the tool call it tells, if any. */
export interface SpanFact {
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  tool?: ToolSpan | undefined;
}

/** The spans of one trace in an export, in the export's order. */
export interface TraceFacts {
  /** Lower-case hex; "" when the span gave none (or an invalid one). */
  traceId: string;
  spans: SpanFact[];
}

/**
 * An export's spans reduced to what the engine reads of them, by trace: the trace reader's thread
 * sends back this, not the decoded export (most of which is attributes no conversation keeps).
 */
export function factsOf(spans: readonly OtlpSpan[]): TraceFacts[] {
  const byTrace = new Map<string, TraceFacts>();
  for (const span of spans) {
    let trace = byTrace.get(span.traceId);
    if (!trace) byTrace.set(span.traceId, (trace = { traceId: span.traceId, spans: [] }));
    const tool = toolCallOf(span);
    trace.spans.push(
      tool
        ? { spanId: span.spanId, parentSpanId: span.parentSpanId, tool }
        : { spanId: span.spanId, parentSpanId: span.parentSpanId },
    );
  }
  return [...byTrace.values()];
}
