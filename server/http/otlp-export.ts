import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { decodeTraceExport, encodeTraceResponse, OtlpDecodeError, type OtlpEncoding } from "../engine/traces/otlp.js";
import type { LiveTraces } from "../engine/traces/live-traces.js";
import { ApiError } from "../errors.js";

/** An OTLP export at most this large, compressed or not. */
export const MAX_OTLP_BODY_BYTES = 4 * 1024 * 1024;
/** Spans read from one export at most: the rest are rejected. */
export const MAX_SPANS_PER_EXPORT = 10_000;

const unzip = promisify(gunzip);

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
 * `assure test`'s loopback server): the body unzipped as its Content-Encoding says, decoded, its
 * spans of live conversations of `projectId` attached, and the ExportTraceServiceResponse in the
 * request's encoding. Bad input is an ApiError, and attaches nothing.
 */
export async function answerOtlpExport(
  liveTraces: LiveTraces | undefined,
  projectId: string | null,
  request: { body: Buffer; encoding: OtlpEncoding; contentEncoding: string | undefined },
): Promise<{ contentType: string; body: string | Uint8Array }> {
  const contentEncoding = (request.contentEncoding ?? "identity").toLowerCase();
  let bytes = request.body;
  if (contentEncoding === "gzip") {
    try {
      bytes = await unzip(bytes, { maxOutputLength: MAX_OTLP_BODY_BYTES });
    } catch (error) {
      const tooLarge = (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
      throw new ApiError(tooLarge ? "PAYLOAD_TOO_LARGE" : "VALIDATION_FAILED", {
        message: tooLarge
          ? `The export is larger than ${MAX_OTLP_BODY_BYTES} bytes uncompressed.`
          : "The body is not gzip as its Content-Encoding says.",
      });
    }
  } else if (contentEncoding !== "identity") {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: "Content-Encoding may be gzip or none." });
  }
  let spans;
  try {
    spans = decodeTraceExport(bytes, request.encoding);
  } catch (error) {
    if (!(error instanceof OtlpDecodeError)) throw error;
    throw new ApiError("VALIDATION_FAILED", {
      message: `The body is not an OTLP ExportTraceServiceRequest: ${error.message}`,
    });
  }
  const read = spans.slice(0, MAX_SPANS_PER_EXPORT);
  const { rejected } = liveTraces && projectId ? liveTraces.attach(projectId, read) : { rejected: read.length };
  const rejectedSpans = rejected + (spans.length - read.length);
  return encodeTraceResponse(
    request.encoding,
    rejectedSpans,
    rejectedSpans > 0 ? `${rejectedSpans} span(s) belong to no conversation assure is holding for this project` : "",
  );
}
