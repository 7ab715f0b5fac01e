import type { OtlpSpan } from "./otlp.js";

/** A tool the agent ran, as one of its spans tells it. */
export interface ToolSpan {
  spanId: string;
  /** The agent's id of the call, else the span's id. */
  callId: string;
  /** Whether the span names the call's id (else `callId` is the span's). */
  callIdGiven: boolean;
  name: string;
  arguments: Record<string, unknown>;
  /** Exactly what the span says the arguments were. */
  argumentsRaw: string;
  argumentsError?: string;
  /** What the tool gave back, when the span says. */
  result?: unknown;
  startTimeUnixNano: bigint;
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** JSON text read as JSON; other text (or a value already parsed) as it is. */
function jsonOrText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function argumentsOf(value: unknown): Pick<ToolSpan, "arguments" | "argumentsRaw" | "argumentsError"> {
  if (value === undefined || value === null) return { arguments: {}, argumentsRaw: "{}" };
  const raw = typeof value === "string" ? value : JSON.stringify(value);
  const parsed = jsonOrText(value);
  if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
    return { arguments: parsed as Record<string, unknown>, argumentsRaw: raw };
  }
  return { arguments: {}, argumentsRaw: raw, argumentsError: "arguments are not a JSON object" };
}

/**
 * The tool call a span records, read by the OpenTelemetry GenAI semantic conventions
 * (`gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) or by OpenInference's
 * (`openinference.span.kind` = `TOOL`, `tool.name`, `tool_call.id`, `input.value`,
 * `output.value`); undefined for any other span.
 */
export function toolCallOf(span: OtlpSpan): ToolSpan | undefined {
  const a = span.attributes;
  const at = { spanId: span.spanId, startTimeUnixNano: span.startTimeUnixNano };
  if (a["gen_ai.operation.name"] === "execute_tool") {
    const name = text(a["gen_ai.tool.name"]) ?? span.name.replace(/^execute_tool\s+/, "");
    const result = a["gen_ai.tool.call.result"];
    const callId = text(a["gen_ai.tool.call.id"]);
    return {
      ...at,
      callId: callId ?? span.spanId,
      callIdGiven: callId !== undefined,
      name,
      ...argumentsOf(a["gen_ai.tool.call.arguments"]),
      ...(result !== undefined && result !== null ? { result: jsonOrText(result) } : {}),
    };
  }
  if (String(a["openinference.span.kind"]).toUpperCase() === "TOOL") {
    const result = a["output.value"];
    const callId = text(a["tool_call.id"]);
    return {
      ...at,
      callId: callId ?? span.spanId,
      callIdGiven: callId !== undefined,
      name: text(a["tool.name"]) ?? span.name,
      ...argumentsOf(a["input.value"]),
      ...(result !== undefined && result !== null ? { result: jsonOrText(result) } : {}),
    };
  }
  return undefined;
}
