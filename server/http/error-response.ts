import { sqlStateOf } from "../store/sql/sql.js";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { ApiError, coerceError, type ErrorCode, type ErrorDetail } from "../errors.js";
import type { Logger } from "../log.js";
import { issueDetail } from "../contract/issue-details.js";
import { toEnvelope } from "./error-envelope.js";

export { toEnvelope };

/** Fastify's own error codes, as the API's. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "MALFORMED_BODY",
  FST_ERR_CTP_EMPTY_JSON_BODY: "MALFORMED_BODY",
  FST_ERR_CTP_INVALID_JSON_BODY: "MALFORMED_BODY",
  FST_ERR_CTP_EMPTY_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_BAD_URL: "VALIDATION_FAILED",
  FST_ERR_ASYNC_CONSTRAINT: "VALIDATION_FAILED",
  FST_ERR_MAX_PARAM_LENGTH: "NOT_FOUND",
};

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  PAYLOAD_TOO_LARGE: "The request body is larger than this endpoint takes.",
  UNSUPPORTED_MEDIA_TYPE: "Send the body as application/json (a test spec may also be application/yaml).",
  MALFORMED_BODY: "The request body is not well-formed JSON.",
  NOT_FOUND: "No such resource.",
};

function validationDetails(error: FastifyError & { validationContext?: string }): ErrorDetail[] {
  const where = error.validationContext === "querystring" ? "query" : (error.validationContext ?? "body");
  return (error.validation ?? []).map((entry) =>
    issueDetail(
      {
        path: entry.instancePath.split("/").filter(Boolean),
        code: entry.keyword,
        message: entry.message ?? "invalid",
        keys: (entry.params as { keys?: string[] }).keys,
      },
      where,
    ),
  );
}

/** SQLite's answers that mean "not now" rather than "wrong": the disk full, the file too large, I/O, a lock held too long. */
const STORAGE_CODES = /^SQLITE_(FULL|TOOBIG|BUSY|LOCKED|IOERR|CANTOPEN|READONLY|PROTOCOL)/;

/**
 * PostgreSQL's answers (SQLSTATE) that mean "not now": the connection lost, the server shutting
 * down, starting or out of resources, a transaction that lost a race to another node's.
 */
const POSTGRES_UNAVAILABLE = /^(08...|53...|57P0.|40001|40P01)$/;

/** PostgreSQL refuses text holding the NUL character (SQLSTATE 22021); SQLite keeps it. */
const POSTGRES_NUL_IN_TEXT = "22021";

function isStorageUnavailable(error: { code?: string; name?: string }): boolean {
  const code = typeof error.code === "string" ? error.code : "";
  return (
    STORAGE_CODES.test(code) ||
    POSTGRES_UNAVAILABLE.test(sqlStateOf(error) ?? "") ||
    error.name === "WriterStoppedError"
  );
}

/** Whatever went wrong, as an ApiError: the one shape a client ever sees. */
export function toApiError(raw: unknown): ApiError {
  if (raw instanceof ApiError) return raw;
  const error = coerceError(raw) as FastifyError & { validationContext?: string };
  if (hasZodFastifySchemaValidationErrors(error)) {
    return new ApiError("VALIDATION_FAILED", {
      message: "The request does not match the schema; see details.",
      details: validationDetails(error),
    });
  }
  if (sqlStateOf(error) === POSTGRES_NUL_IN_TEXT) {
    return new ApiError("VALIDATION_FAILED", {
      message: "The request holds the NUL character (U+0000), which no text here may hold.",
      cause: error,
    });
  }
  if (isStorageUnavailable(error)) {
    return new ApiError("STORAGE_UNAVAILABLE", {
      message: "The database cannot take this write now (busy, or out of space); nothing was written. Retry shortly.",
      headers: { "retry-after": "5" },
      cause: error,
    });
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return new ApiError(mapped, { message: MESSAGES[mapped] ?? error.message, cause: error });
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new ApiError("MALFORMED_BODY", { message: MESSAGES.MALFORMED_BODY!, cause: error });
  }
  if (error.statusCode === 413) {
    return new ApiError("PAYLOAD_TOO_LARGE", { message: MESSAGES.PAYLOAD_TOO_LARGE!, cause: error });
  }
  if (error.statusCode === 415) {
    return new ApiError("UNSUPPORTED_MEDIA_TYPE", { message: MESSAGES.UNSUPPORTED_MEDIA_TYPE!, cause: error });
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError("VALIDATION_FAILED", { message: "The request could not be understood.", cause: error });
  }
  return new ApiError("INTERNAL", {
    message: "Something went wrong on our side; retry, and quote the request id if it persists.",
    cause: error,
  });
}

/** The only place that writes an error response. Unknown failures are logged with their stack, never sent. */
export function makeErrorHandler(log: Logger) {
  return function handleError(raw: unknown, request: FastifyRequest, reply: FastifyReply) {
    let error = toApiError(raw);
    const bodyLimit = request.routeOptions?.bodyLimit;
    if (error.code === "PAYLOAD_TOO_LARGE" && bodyLimit) {
      error = new ApiError("PAYLOAD_TOO_LARGE", {
        message: `The request body is larger than this endpoint takes (${bodyLimit} bytes).`,
        cause: error.cause,
      });
    }
    if (error.code === "INTERNAL" || error.code === "STORAGE_UNAVAILABLE") {
      log.error({ err: coerceError(error.cause ?? raw), request_id: request.id, url: request.url }, "Unhandled error");
    }
    if (error.retryable && !error.headers["retry-after"]) reply.header("retry-after", "1");
    reply.header("x-request-id", request.id);
    return reply.code(error.status).headers(error.headers).type("application/json").send(toEnvelope(error, request.id));
  };
}
