import type { ErrorEnvelope } from "../contract/index.js";
import type { ApiError } from "../errors.js";

/** An ApiError as the spec's error envelope: what every refusal's body is, the service's and assure test's. */
export function toEnvelope(error: ApiError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      request_id: requestId,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}
