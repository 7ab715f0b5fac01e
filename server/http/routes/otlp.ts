import { z } from "zod";
import { OtlpExportTraceServiceRequest } from "../../contract/index.js";
import type { OtlpEncoding } from "../../engine/traces/otlp.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { ApiError } from "../../errors.js";
import { answerOtlpExport, MAX_OTLP_BODY_BYTES, OTLP_MEDIA_TYPES, otlpEncodingOf } from "../otlp-export.js";
import { responses } from "../schemas.js";

export { MAX_OTLP_BODY_BYTES, MAX_SPANS_PER_EXPORT } from "../otlp-export.js";

/** The export's bytes, as they came: read by the route, not by the API's JSON parser. */
class OtlpBody {
  constructor(
    readonly bytes: Buffer,
    readonly encoding: OtlpEncoding,
  ) {}
}

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
      let encoding: OtlpEncoding;
      try {
        encoding = otlpEncodingOf(request.headers["content-type"]);
      } catch (error) {
        return done(error as ApiError, undefined);
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
          consumes: OTLP_MEDIA_TYPES,
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
        const answer = await answerOtlpExport(liveTraces, traceReader.read, principal.project_id, {
          body: body.bytes,
          encoding: body.encoding,
          contentEncoding: request.headers["content-encoding"],
        });
        return reply.code(200).type(answer.contentType).send(answer.body);
      },
    );
  });
}
