import { gunzipSync } from "node:zlib";
import { decodeTraceExport, OtlpDecodeError, type OtlpEncoding } from "../engine/traces/otlp.js";
import { factsOf, type TraceFacts } from "../engine/traces/span-facts.js";

/**
 * Reading an OTLP export — gunzip, protobuf or JSON decoding, each span's attributes — makes
 * garbage in proportion to its size, and the collector's pauses for it held the API's answers
 * (a p99 of 224 ms at 5,000 spans/s under the service's node arguments), so the service does it on
 * a thread of its own (trace-reader.ts). This is what that thread runs: bytes in, compact facts out.
 */

/** An OTLP export at most this large, compressed or not. */
export const MAX_OTLP_BODY_BYTES = 4 * 1024 * 1024;
/** Spans read from one export at most: the rest are rejected. */
export const MAX_SPANS_PER_EXPORT = 10_000;

export type ContentEncoding = "gzip" | "identity";

/** The reader's queue is full: the export is refused before anything of it was read (the exporter retries). */
export class TraceReaderBusy extends Error {
  constructor(readonly pendingBytes: number) {
    super(`${pendingBytes} bytes of exports are being read`);
    this.name = "TraceReaderBusy";
  }
}

/** An export read: its spans' facts by trace and how many spans past the limit it held; or why it was refused. */
export type ExportRead =
  | { ok: true; traces: TraceFacts[]; spans: number; overflow: number }
  | { ok: false; code: "VALIDATION_FAILED" | "PAYLOAD_TOO_LARGE"; message: string };

export function readTraceExport(
  body: Uint8Array,
  encoding: OtlpEncoding,
  contentEncoding: ContentEncoding,
): ExportRead {
  let bytes = body;
  if (contentEncoding === "gzip") {
    try {
      bytes = gunzipSync(body, { maxOutputLength: MAX_OTLP_BODY_BYTES });
    } catch (error) {
      return (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
        ? {
            ok: false,
            code: "PAYLOAD_TOO_LARGE",
            message: `The export is larger than ${MAX_OTLP_BODY_BYTES} bytes uncompressed.`,
          }
        : { ok: false, code: "VALIDATION_FAILED", message: "The body is not gzip as its Content-Encoding says." };
    }
  }
  let spans;
  try {
    spans = decodeTraceExport(bytes, encoding);
  } catch (error) {
    if (!(error instanceof OtlpDecodeError)) throw error;
    return {
      ok: false,
      code: "VALIDATION_FAILED",
      message: `The body is not an OTLP ExportTraceServiceRequest: ${error.message}`,
    };
  }
  const read = spans.length > MAX_SPANS_PER_EXPORT ? spans.slice(0, MAX_SPANS_PER_EXPORT) : spans;
  return { ok: true, traces: factsOf(read), spans: read.length, overflow: spans.length - read.length };
}
