import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { z } from "zod";
import { OtlpExportTraceServiceRequest } from "../../contract/index.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { ApiError } from "../../errors.js";
import { responses } from "../schemas.js";
import {
  decodeTraceExport,
  encodeTraceResponse,
  OtlpDecodeError,
  type OtlpEncoding,
} from "../../engine/traces/otlp.js";

/** An OTLP export at most this large, compressed or not. */
export const MAX_OTLP_BODY_BYTES = 4 * 1024 * 1024;
/** Spans read from one export at most: the rest are rejected. */
export const MAX_SPANS_PER_EXPORT = 10_000;

const unzip = promisify(gunzip);

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
export function registerOtlpRoutes(api: Api, { liveTraces }: Pick<ApiDeps, "liveTraces">) {
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
            "An OTLP/HTTP `ExportTraceServiceRequest`, protobuf (`application/x-protobuf`) or JSON (`application/json`), `Content-Encoding: gzip` or none, at most 4 MiB. Spans whose trace id assure sent (`traceparent`) to an agent of the key's project in a conversation still held are attached to it; the answer's `partialSuccess.rejectedSpans` counts the others. Answered in the request's encoding.",
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
        let bytes = body.bytes;
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
          spans = decodeTraceExport(bytes, body.encoding);
        } catch (error) {
          if (!(error instanceof OtlpDecodeError)) throw error;
          throw new ApiError("VALIDATION_FAILED", {
            message: `The body is not an OTLP ExportTraceServiceRequest: ${error.message}`,
          });
        }
        const read = spans.slice(0, MAX_SPANS_PER_EXPORT);
        const projectId = principal.project_id;
        const { rejected } = liveTraces && projectId ? liveTraces.attach(projectId, read) : { rejected: read.length };
        const rejectedSpans = rejected + (spans.length - read.length);
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
