import type { LiveTraces } from "../engine/traces/live-traces.js";
import { encodeTraceResponse, type OtlpEncoding } from "../engine/traces/otlp.js";
import { ApiError } from "../errors.js";
import { TraceReaderBusy, type ContentEncoding, type ExportRead } from "../trace-reader/read-export.js";

export { MAX_OTLP_BODY_BYTES, MAX_SPANS_PER_EXPORT } from "../trace-reader/read-export.js";

/** How soon an exporter refused for a full queue is asked to try again (OTLP/HTTP throttling: 429 with Retry-After). */
export const OTLP_RETRY_AFTER_SECONDS = 1;

/** Reads an export's bytes into its spans' facts: the service's reader thread, or in process (`assure test`). */
export type ReadExport = (
  body: Uint8Array,
  encoding: OtlpEncoding,
  contentEncoding: ContentEncoding,
) => Promise<ExportRead>;

const ENCODINGS: Record<string, OtlpEncoding> = {
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
  "application/json": "json",
};
export const OTLP_MEDIA_TYPES = Object.keys(ENCODINGS);

const unsupported = () =>
  new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: "OTLP/HTTP takes application/x-protobuf or application/json." });

/** The encoding a Content-Type names; an ApiError (UNSUPPORTED_MEDIA_TYPE) when it names none OTLP/HTTP takes. */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding {
  const encoding = ENCODINGS[(contentType ?? "").split(";")[0]!.trim().toLowerCase()];
  if (!encoding) throw unsupported();
  return encoding;
}

/**
 * One OTLP/HTTP trace export, as `POST /otlp/v1/traces` answers it (the service's route and
 * `assure test`'s loopback server): read as its Content-Encoding and Content-Type say, its spans
 * of live conversations of `projectId` attached, and the ExportTraceServiceResponse in the
 * request's encoding. Bad input is an ApiError, and attaches nothing; so is a full reader queue
 * (429 with Retry-After: nothing of the export was taken, the exporter sends it again).
 */
export async function answerOtlpExport(
  liveTraces: LiveTraces | undefined,
  readExport: ReadExport,
  projectId: string | null,
  request: { body: Buffer; encoding: OtlpEncoding; contentEncoding: string | undefined },
): Promise<{ contentType: string; body: string | Uint8Array }> {
  const contentEncoding = (request.contentEncoding ?? "identity").toLowerCase();
  if (contentEncoding !== "gzip" && contentEncoding !== "identity") {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: "Content-Encoding may be gzip or none." });
  }
  let read: ExportRead;
  try {
    read = await readExport(request.body, request.encoding, contentEncoding);
  } catch (error) {
    if (!(error instanceof TraceReaderBusy)) throw error;
    throw new ApiError("RATE_LIMITED", {
      message:
        "The service is reading as many trace exports as it holds; nothing of this one was taken. Retry after Retry-After seconds.",
      headers: { "retry-after": String(OTLP_RETRY_AFTER_SECONDS) },
    });
  }
  if (!read.ok) throw new ApiError(read.code, { message: read.message });
  const { rejected } = liveTraces && projectId ? liveTraces.attach(projectId, read.traces) : { rejected: read.spans };
  const rejectedSpans = rejected + read.overflow;
  return encodeTraceResponse(
    request.encoding,
    rejectedSpans,
    rejectedSpans > 0 ? `${rejectedSpans} span(s) belong to no conversation assure is holding for this project` : "",
  );
}
