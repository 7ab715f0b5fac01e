import { coerceError } from "../errors.js";
import type { EgressPolicy } from "./egress.js";
import type { AgentPacer, CallFeedback } from "./agent-pacer.js";
import { OutboundTimeoutError, sendOutbound, type OutboundResponse } from "./http-request.js";

const TRANSIENT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
// 529: Anthropic's "overloaded".
const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504, 529]);
const RAW_LIMIT = 64 * 1024;

/** How a call to an agent or a judge ended; `T` is what the protocol reads from a 2xx answer. */
export type CallOutcome<T> =
  | ({ kind: "ok"; attempts: number; latency_ms: number } & T)
  /** Could not be reached, even after retries (connection failures, 429/500/502/503/504/529). */
  | { kind: "unreachable"; message: string }
  /** Answered with another HTTP error (401, 403, 404, …): reachable, but not usable as configured. */
  | { kind: "refused"; message: string; http_status: number; response_body: string }
  | { kind: "timeout"; message: string }
  /** Answered, but not as the protocol says: the body is kept as evidence. */
  | { kind: "invalid"; message: string; http_status: number; response_body: string };

export interface JsonCallOptions {
  /** Parsed once by a caller that calls it again and again. */
  url: string | URL;
  headers: Record<string, string>;
  /** Sent as JSON; undefined: no body. */
  body: unknown;
  /** POST unless said. */
  method?: "GET" | "POST" | "PUT" | "PATCH";
  /** Reads the answer's text into the value `read` takes (JSON.parse unless said); throws what is wrong with it. */
  decode?: (text: string) => unknown;
  timeoutMs: number;
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
  signal: AbortSignal;
  /** Paces the calls to this agent with every other call to it; none: sent at once. */
  pacer?: AgentPacer | undefined;
  /** Told each time the agent asks to wait (429 or 503 with Retry-After) and the wait begins. */
  onThrottled?: ((wait: ThrottledWait) => void) | undefined;
  /** Waits the agent asks for must end by then (epoch ms); a longer one ends the call as a timeout. */
  deadline?: number | undefined;
  now?: () => number;
}

/** Tokens an answer reports (OpenAI's `usage`); null when it reports none: unknown, never zero. */
export interface TokenUsage {
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number;
}

export interface ThrottledWait {
  http_status: number;
  retry_after_ms: number;
}

/** A call waits out at most this many Retry-After answers (without a deadline, fewer): an agent that never stops asking is unreachable. */
const MAX_WAITS = 100;
const MAX_WAITS_WITHOUT_DEADLINE = 20;
/** A Retry-After of 0 still waits this long, so an agent answering it again and again is not hammered. */
const MIN_WAIT_MS = 250;
/** Longer than any run may last: a Retry-After beyond it is read as this. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** Retry-After in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined if absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(MAX_RETRY_AFTER_MS, Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

function feedbackOf(response: OutboundResponse, now: number): CallFeedback {
  const waits = response.status === 429 || response.status === 503;
  return {
    answered: response.status >= 200 && response.status < 300,
    tooManyRequests: response.status === 429,
    retryAfterMs: waits ? parseRetryAfter(response.headers["retry-after"], now) : undefined,
  };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

const truncate = (text: string) => (text.length > RAW_LIMIT ? `${text.slice(0, RAW_LIMIT)}…[truncated]` : text);

/** What a protocol reads from a 2xx JSON answer, or why the answer breaks the protocol. */
export type AnswerReading<T> = { ok: true; answer: T } | { ok: false; message: string };

/** An exchange as the retries left it: an answer that is not transient, or why there is none. */
export type ExchangeOutcome =
  | { kind: "answered"; response: OutboundResponse; attempts: number }
  | Extract<CallOutcome<object>, { kind: "unreachable" | "timeout" }>;

export interface ExchangeOptions extends Omit<JsonCallOptions, "body" | "decode"> {
  /** Sent as it is. */
  body?: string | undefined;
}

/**
 * One HTTP exchange with an agent or a judge, however many attempts it takes: transient failures
 * (connection errors, 429/500/502/503/504/529) are retried with backoff, a wait the agent asks for
 * (Retry-After) is waited out without counting as an attempt, every attempt goes through the
 * pacer. The first answer that is not transient is returned, whatever its status.
 */
export async function exchangeWithRetries(egress: EgressPolicy, options: ExchangeOptions): Promise<ExchangeOutcome> {
  const {
    url,
    method = "POST",
    headers,
    body,
    timeoutMs,
    maxAttempts = 3,
    backoffMs = (attempt) => 100 * 3 ** (attempt - 1),
    signal,
    pacer,
    onThrottled,
    deadline,
    now = Date.now,
  } = options;
  const send = () =>
    sendOutbound(egress, { url, method, headers, ...(body !== undefined ? { body } : {}), timeoutMs, signal });
  let lastProblem = "";
  let waits = 0;
  for (let attempt = 1; attempt <= maxAttempts;) {
    if (signal.aborted) throw coerceError(signal.reason);
    try {
      const response = pacer ? await pacer.call(send, (r) => feedbackOf(r, now()), signal) : await send();
      if (!TRANSIENT_STATUS.has(response.status)) return { kind: "answered", response, attempts: attempt };
      lastProblem = `HTTP ${response.status}`;
      const retryAfterMs = feedbackOf(response, now()).retryAfterMs;
      if (retryAfterMs !== undefined) {
        const waitMs = Math.max(MIN_WAIT_MS, retryAfterMs);
        if (deadline !== undefined && now() + waitMs > deadline) {
          return {
            kind: "timeout",
            message: `${url} asked to wait ${Math.ceil(waitMs / 1000)} s (HTTP ${response.status}, Retry-After), past the run's deadline`,
          };
        }
        const maxWaits = deadline === undefined ? MAX_WAITS_WITHOUT_DEADLINE : MAX_WAITS;
        if (++waits > maxWaits) {
          return {
            kind: "unreachable",
            message: `${url} asked to wait ${maxWaits} times in a row (HTTP ${response.status}, Retry-After)`,
          };
        }
        onThrottled?.({ http_status: response.status, retry_after_ms: waitMs });
        await abortableSleep(waitMs, signal);
        continue;
      }
    } catch (raw) {
      const error = coerceError(raw);
      if (signal.aborted) throw coerceError(signal.reason);
      if (error instanceof OutboundTimeoutError) {
        return { kind: "timeout", message: `No answer from ${url} within ${timeoutMs} ms` };
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (!code || !TRANSIENT_CODES.has(code)) {
        return { kind: "unreachable", message: `${url} cannot be reached: ${error.message}` };
      }
      lastProblem = `${code}: ${error.message}`;
    }
    if (attempt < maxAttempts) await abortableSleep(backoffMs(attempt), signal);
    attempt++;
  }
  return { kind: "unreachable", message: `${url} failed ${maxAttempts} times; last: ${lastProblem}` };
}

/**
 * One JSON exchange with an agent or a judge (`exchangeWithRetries`), its answer classified and a
 * 2xx one read by the protocol's `read`. Callers decide what each outcome means (a failed agent,
 * an unavailable judge).
 */
export async function postJsonCall<T extends object>(
  egress: EgressPolicy,
  options: JsonCallOptions,
  read: (json: unknown) => AnswerReading<T>,
): Promise<CallOutcome<T>> {
  const { body, decode, ...exchange } = options;
  const outcome = await exchangeWithRetries(egress, {
    ...exchange,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (outcome.kind !== "answered") return outcome;
  return classify(outcome.response, outcome.attempts, read, decode);
}

function classify<T extends object>(
  response: OutboundResponse,
  attempts: number,
  read: (json: unknown) => AnswerReading<T>,
  decode: ((text: string) => unknown) | undefined,
): CallOutcome<T> {
  const status = response.status;
  const text = response.body.toString("utf8");
  const invalid = (message: string): CallOutcome<T> => ({
    kind: "invalid",
    message,
    http_status: status,
    response_body: truncate(text),
  });
  if (status < 200 || status >= 300) {
    return { kind: "refused", message: `HTTP ${status}`, http_status: status, response_body: truncate(text) };
  }
  let json: unknown;
  try {
    json = decode ? decode(text) : JSON.parse(text);
  } catch (error) {
    return invalid(decode && error instanceof Error ? error.message : "the body is not JSON");
  }
  const reading = read(json);
  if (!reading.ok) return invalid(reading.message);
  return { kind: "ok", attempts, latency_ms: Math.round(response.elapsedMs * 100) / 100, ...reading.answer };
}

/** A zod schema's first complaint, as `path: message`. */
export function firstIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const issue = error.issues[0]!;
  return `${issue.path.map(String).join(".") || "(body)"}: ${issue.message}`;
}
