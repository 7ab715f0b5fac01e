import { z } from "zod";
import { coerceError } from "../errors.js";
import type { EgressPolicy } from "./egress.js";
import { OutboundTimeoutError, sendOutbound } from "./http-request.js";

/** The part of an OpenAI Chat Completions response that assure relies on, for agents and judges alike. */
export const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          role: z.literal("assistant").optional(),
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().min(1),
                type: z.literal("function").optional(),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
});
export type ChatChoice = z.infer<typeof ChatCompletion>["choices"][number];

const TRANSIENT_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH"]);
const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
const RAW_LIMIT = 64 * 1024;

export type ChatOutcome =
  | { kind: "ok"; choice: ChatChoice; attempts: number; latency_ms: number }
  /** Could not be reached, even after retries (connection failures, 429/500/502/503/504). */
  | { kind: "unreachable"; message: string }
  /** Answered with another HTTP error (401, 403, 404, …): reachable, but not usable as configured. */
  | { kind: "refused"; message: string; http_status: number; response_body: string }
  | { kind: "timeout"; message: string }
  /** Answered, but not with a Chat Completion: the body is kept as evidence. */
  | { kind: "invalid"; message: string; http_status: number; response_body: string };

export interface ChatRequestOptions {
  /** Parsed once by a caller that calls it again and again. */
  url: string | URL;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
  signal: AbortSignal;
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

/**
 * One Chat Completions exchange: transient failures are retried with backoff, and the answer
 * is classified. Callers decide what each outcome means (a failed agent, an unavailable judge).
 */
export async function postChatCompletion(
  egress: EgressPolicy,
  { url, headers, body, timeoutMs, maxAttempts = 3, backoffMs = (attempt) => 100 * 3 ** (attempt - 1), signal }: ChatRequestOptions,
): Promise<ChatOutcome> {
  const payload = JSON.stringify(body);
  let lastProblem = "";
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (signal.aborted) throw coerceError(signal.reason);
    try {
      const response = await sendOutbound(egress, { url, method: "POST", headers, body: payload, timeoutMs, signal });
      if (!TRANSIENT_STATUS.has(response.status)) return classify(response.status, response.body.toString("utf8"), attempt, response.elapsedMs);
      lastProblem = `HTTP ${response.status}`;
    } catch (raw) {
      const error = coerceError(raw);
      if (signal.aborted) throw coerceError(signal.reason);
      if (error instanceof OutboundTimeoutError) return { kind: "timeout", message: `No answer from ${url} within ${timeoutMs} ms` };
      const code = (error as NodeJS.ErrnoException).code;
      if (!code || !TRANSIENT_CODES.has(code)) return { kind: "unreachable", message: `${url} cannot be reached: ${error.message}` };
      lastProblem = `${code}: ${error.message}`;
    }
    if (attempt < maxAttempts) await abortableSleep(backoffMs(attempt), signal);
  }
  return { kind: "unreachable", message: `${url} failed ${maxAttempts} times; last: ${lastProblem}` };
}

function classify(status: number, text: string, attempts: number, elapsedMs: number): ChatOutcome {
  const invalid = (message: string): ChatOutcome => ({ kind: "invalid", message, http_status: status, response_body: truncate(text) });
  if (status < 200 || status >= 300) return { kind: "refused", message: `HTTP ${status}`, http_status: status, response_body: truncate(text) };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return invalid("the body is not JSON");
  }
  const parsed = ChatCompletion.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return invalid(`${issue.path.join(".") || "(body)"}: ${issue.message}`);
  }
  return { kind: "ok", choice: parsed.data.choices[0]!, attempts, latency_ms: Math.round(elapsedMs * 100) / 100 };
}
