import { z } from "zod";
import { OtlpExportTraceServiceRequest } from "../../contract/index.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { ApiError } from "../../errors.js";
import { responses } from "../schemas.js";
import { encodeTraceResponse, type OtlpEncoding } from "../../engine/traces/otlp.js";
import { MAX_OTLP_BODY_BYTES } from "../../trace-reader/read-export.js";
import { TraceReaderBusy } from "../../trace-reader/trace-reader.js";

/** How soon an exporter refused for a full queue is asked to try again (OTLP/HTTP throttling: 429 with Retry-After). */
export const OTLP_RETRY_AFTER_SECONDS = 1;

/** The export's bytes, as they came: read by the route, not by the API's JSON parser. */
class OtlpBody {
  constructor(
    readonly bytes: Buffer,
    readonly encoding: OtlpEncoding,
  ) {}
}

const ENCODINGS: Record<string, OtlpEncoding> = {
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
  "application/json": "json",
};

/**
 * `POST /otlp/v1/traces`: OTLP/HTTP trace exports of agents under test (so an agent's
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is `{ASSURE_BASE_URL}/otlp`), protobuf or JSON, gzip-encoded or
 * not, with a project key holding `traces:write`. Spans of a trace the engine minted for one of
 * the project's live conversations are attached to it; the others are counted as rejected.
 */
export function registerOtlpRoutes(api: Api, { liveTraces, traceReader }: Pick<ApiDeps, "liveTraces" | "traceReader">) {
  void api.register(async (otlp) => {
    // Its own parsers: the body's bytes as they came (gzip too), whatever the API does with JSON.
    otlp.removeAllContentTypeParsers();
    otlp.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: MAX_OTLP_BODY_BYTES }, (request, body, done) => {
      const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      const encoding = ENCODINGS[type];
      if (!encoding) {
        return done(
          new ApiError("UNSUPPORTED_MEDIA_TYPE", {
            message: "OTLP/HTTP takes application/x-protobuf or application/json.",
          }),
          undefined,
        );
      }
      done(null, new OtlpBody(body as Buffer, encoding));
    });

    otlp.post(
      "/otlp/v1/traces",
      {
        schema: {
          operationId: "exportTraces",
          tags: ["traces"],
          summary: "Export an agent's OpenTelemetry spans (OTLP/HTTP)",
          consumes: Object.keys(ENCODINGS),
          body: OtlpExportTraceServiceRequest,
          description:
            "An OTLP/HTTP `ExportTraceServiceRequest`, protobuf (`application/x-protobuf`) or JSON (`application/json`), `Content-Encoding: gzip` or none, at most 4 MiB. Spans whose trace id assure sent (`traceparent`) to an agent of the key's project in a conversation still held are attached to it; the answer's `partialSuccess.rejectedSpans` counts the others. Answered in the request's encoding. While the service is reading as many exports as it holds, an export is refused with 429 (`RATE_LIMITED`) and `Retry-After`, as OTLP/HTTP throttles: nothing of it was taken, and the exporter sends it again.",
          response: responses({
            200: z
              .object({
                partialSuccess: z.object({
                  rejectedSpans: z.number().int().describe("Spans not attached to a live conversation"),
                  errorMessage: z.string(),
                }),
              })
              .describe("An ExportTraceServiceResponse (protobuf when the request was)"),
          }),
        },
        config: {
          scope: "traces:write",
          audited: false,
          errors: ["VALIDATION_FAILED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"],
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body as unknown;
        if (!(body instanceof OtlpBody)) {
          throw new ApiError("UNSUPPORTED_MEDIA_TYPE", {
            message: "OTLP/HTTP takes application/x-protobuf or application/json.",
          });
        }
        const contentEncoding = String(request.headers["content-encoding"] ?? "identity").toLowerCase();
        if (contentEncoding !== "gzip" && contentEncoding !== "identity") {
          throw new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: "Content-Encoding may be gzip or none." });
        }
        let read;
        try {
          read = await traceReader.read(body.bytes, body.encoding, contentEncoding);
        } catch (error) {
          if (!(error instanceof TraceReaderBusy)) throw error;
          throw new ApiError("RATE_LIMITED", {
            message:
              "The service is reading as many trace exports as it holds; nothing of this one was taken. Retry after Retry-After seconds.",
            headers: { "retry-after": String(OTLP_RETRY_AFTER_SECONDS) },
          });
        }
        if (!read.ok) throw new ApiError(read.code, { message: read.message });
        const projectId = principal.project_id;
        const { rejected } =
          liveTraces && projectId ? liveTraces.attach(projectId, read.traces) : { rejected: read.spans };
        const rejectedSpans = rejected + read.overflow;
        const answer = encodeTraceResponse(
          body.encoding,
          rejectedSpans,
          rejectedSpans > 0
            ? `${rejectedSpans} span(s) belong to no conversation assure is holding for this project`
            : "",
        );
        return reply.code(200).type(answer.contentType).send(answer.body);
      },
    );
  });
}
