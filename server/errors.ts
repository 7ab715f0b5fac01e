import type { FailureCause, Verdict } from "./contract/index.js";

/**
 * Every error the API can answer with. Status and retryability live here, once, so a code means
 * the same thing wherever it is thrown. The error table of docs/api.md is this table.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: { status: 400, retryable: false },
  AGENT_URL_NOT_ALLOWED: { status: 400, retryable: false },
  MALFORMED_BODY: { status: 400, retryable: false },
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, retryable: false },
  PROJECT_ID_REQUIRED: { status: 400, retryable: false },
  INVALID_CURSOR: { status: 400, retryable: false },
  INVALID_PARAMETER_COMBINATION: { status: 400, retryable: false },
  WEBHOOK_URL_NOT_ALLOWED: { status: 400, retryable: false },
  UNAUTHENTICATED: { status: 401, retryable: false },
  INSUFFICIENT_SCOPE: { status: 403, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  REQUEST_TIMEOUT: { status: 408, retryable: true },
  CONFLICT: { status: 409, retryable: false },
  PLANNED_BY_APP: { status: 409, retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  IDEMPOTENCY_KEY_REUSED: { status: 422, retryable: false },
  COMMIT_NOT_GATED: { status: 422, retryable: false },
  NOT_WAIVABLE: { status: 422, retryable: false },
  NOTHING_TO_APPROVE: { status: 422, retryable: false },
  SPEC_INCONSISTENT: { status: 422, retryable: false },
  SPEC_FILE_INVALID: { status: 422, retryable: false },
  HEADERS_REQUIRED: { status: 422, retryable: false },
  PROTOCOL_MISMATCH: { status: 422, retryable: false },
  SOURCE_INCOMPLETE: { status: 422, retryable: false },
  UPLOAD_CASES_MISMATCH: { status: 422, retryable: false },
  UPLOAD_TURNS_MISMATCH: { status: 422, retryable: false },
  UPLOAD_MOCKS_MISMATCH: { status: 422, retryable: false },
  UPLOAD_TRACE_INVALID: { status: 422, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  RUN_QUOTA_EXCEEDED: { status: 429, retryable: true },
  HEADERS_TOO_LARGE: { status: 431, retryable: false },
  INTERNAL: { status: 500, retryable: true },
  ENVIRONMENT_NOT_READY: { status: 503, retryable: true },
  STORAGE_UNAVAILABLE: { status: 503, retryable: true },
  GITHUB_UNAVAILABLE: { status: 503, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  /** Where the problem is, e.g. `body.spec.scenarios[0].turns` or `query.limit`. */
  path: string;
  message: string;
  /** A machine-readable reason, where callers act on it (why a sign-in was refused). */
  reason?: string;
}

export interface ApiErrorOptions {
  message?: string;
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, { message, details, headers = {}, cause }: ApiErrorOptions = {}) {
    super(message ?? code.toLowerCase().replaceAll("_", " "), { cause });
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
    this.details = details;
    this.headers = headers;
  }
}

/** Whatever was thrown, an Error comes out: nothing else reaches a logger or a response. */
export function coerceError(raw: unknown): Error {
  if (raw instanceof Error) return raw;
  // Errors from another realm (a VM context, a worker) fail instanceof but are errors all the same.
  if (
    raw !== null &&
    typeof raw === "object" &&
    typeof (raw as Error).message === "string" &&
    typeof (raw as Error).name === "string"
  ) {
    return Object.assign(new Error((raw as Error).message, { cause: raw }), raw);
  }
  if (typeof raw === "string") return new Error(raw);
  try {
    return new Error(`Non-error thrown: ${JSON.stringify(raw)}`);
  } catch {
    return new Error(`Non-error thrown: ${String(raw)}`);
  }
}

/**
 * Why a run failed (spec §3: the causes stay distinguishable), and what that means: whether trying
 * again could help, and the verdict it carries. An agent that broke the protocol was judged
 * (FAIL); otherwise nothing was judged (ERROR).
 */
export const FAILURE_CAUSES: Readonly<Record<FailureCause, { retryable: boolean; verdict: Verdict }>> = {
  agent_contract_violation: { retryable: false, verdict: "FAIL" },
  target_unreachable: { retryable: true, verdict: "ERROR" },
  evaluator_unavailable: { retryable: true, verdict: "ERROR" },
  timeout: { retryable: true, verdict: "ERROR" },
  internal_error: { retryable: false, verdict: "ERROR" },
  budget_exceeded: { retryable: false, verdict: "ERROR" },
};

/** A run ends FAILED by throwing this from anywhere in its execution. */
export class RunFailedError extends Error {
  override name = "RunFailedError";
  constructor(
    readonly failureCause: FailureCause,
    message: string,
    /** What the agent answered, when that is the evidence: recorded in the trace. */
    readonly evidence?: { http_status?: number; response_body?: string },
  ) {
    super(message);
  }
}

/** The service cannot start as configured: the message says what to change. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
