import { createRequire } from "node:module";

/**
 * OTLP/HTTP trace exports, read with the OpenTelemetry project's own protobufjs-generated module
 * (`@opentelemetry/otlp-transformer@0.216.0`, the last release that ships its decoders: pinned),
 * and OTLP/JSON as the specification maps the same messages. Only what the engine reads of a span
 * is kept.
 */

interface ProtobufMessage {
  decode(reader: Uint8Array): unknown;
  encode(message: unknown): { finish(): Uint8Array };
}
interface TraceServiceRoot {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtobufMessage; ExportTraceServiceResponse: ProtobufMessage } };
      };
    };
  };
}

// The package has no `exports` map: its generated module is reached by path (CommonJS).
const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as TraceServiceRoot;
const TraceService = root.opentelemetry.proto.collector.trace.v1;

/** One span, as the engine reads it. Ids are lower-case hex; times in nanoseconds since the epoch. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  startTimeUnixNano: bigint;
  /** A tool span's attributes (the only ones the engine reads); {} for any other span. */
  attributes: Record<string, unknown>;
}

export type OtlpEncoding = "protobuf" | "json";

export class OtlpDecodeError extends Error {}

/** The spans of an `ExportTraceServiceRequest`; throws OtlpDecodeError when the body is not one. */
export function decodeTraceExport(body: Uint8Array, encoding: OtlpEncoding): OtlpSpan[] {
  let message: unknown;
  try {
    message =
      encoding === "protobuf"
        ? TraceService.ExportTraceServiceRequest.decode(body)
        : JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (error) {
    throw new OtlpDecodeError(error instanceof Error ? error.message : String(error));
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    throw new OtlpDecodeError("the body is not an ExportTraceServiceRequest");
  }
  const spans: OtlpSpan[] = [];
  for (const resourceSpans of listOf(field(message, "resourceSpans", "resource_spans"))) {
    for (const scopeSpans of listOf(field(resourceSpans, "scopeSpans", "scope_spans"))) {
      for (const span of listOf(field(scopeSpans, "spans"))) spans.push(readSpan(span));
    }
  }
  return spans;
}

/** An `ExportTraceServiceResponse` in the request's encoding. */
export function encodeTraceResponse(
  encoding: OtlpEncoding,
  rejectedSpans: number,
  errorMessage: string,
): { contentType: string; body: Buffer } {
  const partialSuccess = { rejectedSpans, errorMessage };
  if (encoding === "json") {
    return { contentType: "application/json", body: Buffer.from(JSON.stringify({ partialSuccess })) };
  }
  const bytes = TraceService.ExportTraceServiceResponse.encode({ partialSuccess }).finish();
  return { contentType: "application/x-protobuf", body: Buffer.from(bytes) };
}

/** An `ExportTraceServiceResponse` read back (protobuf): what an exporter is told. */
export function decodeTraceResponse(body: Uint8Array): { rejectedSpans: number; errorMessage: string } {
  const message = TraceService.ExportTraceServiceResponse.decode(body);
  const partial = field(message, "partialSuccess");
  return {
    rejectedSpans: Number(int64Of(field(partial, "rejectedSpans"))),
    errorMessage: String(field(partial, "errorMessage") ?? ""),
  };
}

/** A field of a decoded message, by its name (protobuf, OTLP/JSON) or else its snake_case name (OTLP/JSON as some write it). */
function field(object: unknown, name: string, snakeName?: string): unknown {
  if (object === null || typeof object !== "object") return undefined;
  const value = (object as Record<string, unknown>)[name];
  if (value !== undefined && value !== null) return value;
  if (snakeName === undefined) return undefined;
  const snake = (object as Record<string, unknown>)[snakeName];
  return snake === null ? undefined : snake;
}

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A protobuf `bytes` id (decoded: bytes; OTLP/JSON: hex) as lower-case hex; "" when absent or invalid. */
function idOf(value: unknown, bytes: number): string {
  if (value instanceof Uint8Array) {
    if (value.length !== bytes) return "";
    return (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.length)).toString("hex");
  }
  if (typeof value === "string" && value.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(value)) {
    return value.toLowerCase();
  }
  return "";
}

/** A 64-bit integer as protobufjs (a Long or a number) or OTLP/JSON (a decimal string or a number) gives it. */
function int64Of(value: unknown): bigint {
  try {
    if (typeof value === "number" && Number.isFinite(value)) return BigInt(Math.trunc(value));
    if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
    if (value !== null && typeof value === "object" && "low" in value && "high" in value) {
      const { low, high } = value as { low: number; high: number };
      return (BigInt.asUintN(32, BigInt(high)) << 32n) | BigInt.asUintN(32, BigInt(low));
    }
  } catch {
    // not a number: zero
  }
  return 0n;
}

function readSpan(span: unknown): OtlpSpan {
  const attributes = listOf(field(span, "attributes"));
  return {
    traceId: idOf(field(span, "traceId", "trace_id"), 16),
    spanId: idOf(field(span, "spanId", "span_id"), 8),
    parentSpanId: idOf(field(span, "parentSpanId", "parent_span_id"), 8),
    name: String(field(span, "name") ?? ""),
    startTimeUnixNano: int64Of(field(span, "startTimeUnixNano", "start_time_unix_nano")),
    // Most of an agent's spans are not tools': theirs are not read (an export's attributes are most of its work).
    attributes: isToolSpan(attributes) ? attributesOf(attributes) : {},
  };
}

/** Whether a span's attributes mark it a tool call, by the GenAI conventions or OpenInference's. */
function isToolSpan(list: readonly unknown[]): boolean {
  for (const attribute of list) {
    const key = field(attribute, "key");
    if (key !== "gen_ai.operation.name" && key !== "openinference.span.kind") continue;
    const value = anyValueOf(field(attribute, "value"), 0);
    if (key === "gen_ai.operation.name" ? value === "execute_tool" : String(value).toUpperCase() === "TOOL") {
      return true;
    }
  }
  return false;
}

function attributesOf(list: readonly unknown[]): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const attribute of list) {
    const key = field(attribute, "key");
    if (typeof key === "string") attributes[key] = anyValueOf(field(attribute, "value"), 0);
  }
  return attributes;
}

/** An `AnyValue` as plain JSON (ints as numbers when they fit, else as decimal text). */
function anyValueOf(value: unknown, depth: number): unknown {
  if (value === undefined || value === null || depth > 16) return null;
  const string = field(value, "stringValue", "string_value");
  if (typeof string === "string") return string;
  const bool = field(value, "boolValue", "bool_value");
  if (typeof bool === "boolean") return bool;
  const int = field(value, "intValue", "int_value");
  if (int !== undefined) {
    const big = int64Of(int);
    return big <= BigInt(Number.MAX_SAFE_INTEGER) && big >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(big) : String(big);
  }
  const double = field(value, "doubleValue", "double_value");
  if (double !== undefined) return Number(double);
  const array = field(value, "arrayValue", "array_value");
  if (array !== undefined) return listOf(field(array, "values")).map((item) => anyValueOf(item, depth + 1));
  const kvlist = field(value, "kvlistValue", "kvlist_value");
  if (kvlist !== undefined) {
    return Object.fromEntries(
      listOf(field(kvlist, "values")).flatMap((entry) => {
        const key = field(entry, "key");
        return typeof key === "string" ? [[key, anyValueOf(field(entry, "value"), depth + 1)]] : [];
      }),
    );
  }
  const bytes = field(value, "bytesValue", "bytes_value");
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString("base64");
  if (typeof bytes === "string") return bytes;
  return null;
}
