import { RunFailedError } from "../../errors.js";
import { postJsonCall, type AnswerReading, type CallOutcome, type ThrottledWait } from "../../net/json-call.js";
import type { AgentOptions, AgentReply, ModelAnswer } from "./types.js";

export type Answered<T> = Extract<CallOutcome<T>, { kind: "ok" }>;

/**
 * One call to an agent under test, as every HTTP protocol makes it (retries, `Retry-After`
 * pacing, the run's deadline); what cannot be recovered from becomes a run failure with its
 * cause: target_unreachable (also for HTTP errors such as 401 or 404: the environment is
 * misconfigured), timeout, or agent_contract_violation when a 2xx answer breaks the protocol
 * (the response is evidence).
 */
export async function callAgent<T extends object>(
  options: AgentOptions,
  call: {
    url: URL;
    /** The protocol's own headers; the environment's (sealed) headers win over them. */
    headers?: Record<string, string>;
    body: unknown;
    method?: "GET" | "POST" | "PUT" | "PATCH";
    decode?: (text: string) => unknown;
    signal: AbortSignal;
    onThrottled: ((wait: ThrottledWait) => void) | undefined;
    /** The call's W3C trace context (AgentRequest.traceparent), sent as the `traceparent` header. */
    traceparent?: string | undefined;
    /** Names the contract in a violation: "the Chat Completions contract". */
    contract: string;
    read: (json: unknown) => AnswerReading<T>;
  },
): Promise<Answered<T>> {
  const { egress, target, timeoutMs, maxAttempts, backoffMs, pacer, deadline, now } = options;
  const outcome = await postJsonCall(
    egress,
    {
      url: call.url,
      headers: withHeaders(
        { ...call.headers, ...(call.traceparent ? { traceparent: call.traceparent } : {}) },
        target.headers,
      ),
      body: call.body,
      ...(call.method ? { method: call.method } : {}),
      ...(call.decode ? { decode: call.decode } : {}),
      timeoutMs,
      signal: call.signal,
      pacer,
      onThrottled: call.onThrottled,
      deadline,
      ...(now ? { now } : {}),
      ...(maxAttempts ? { maxAttempts } : {}),
      ...(backoffMs ? { backoffMs } : {}),
    },
    call.read,
  );
  switch (outcome.kind) {
    case "unreachable":
      throw new RunFailedError("target_unreachable", `The agent ${outcome.message}`);
    case "refused":
      throw new RunFailedError("target_unreachable", `The agent at ${call.url} refused the call: ${outcome.message}`, {
        http_status: outcome.http_status,
        response_body: outcome.response_body,
      });
    case "timeout":
      throw new RunFailedError("timeout", `The agent did not answer: ${outcome.message}`);
    case "invalid":
      throw new RunFailedError(
        "agent_contract_violation",
        `The agent's answer breaks ${call.contract}: ${outcome.message}`,
        { http_status: outcome.http_status, response_body: outcome.response_body },
      );
    case "ok":
      return outcome as Answered<T>;
  }
}

/** The reply an answer gives, with how the call went. */
export function replyOf({ kind: _answered, ...reply }: Answered<ModelAnswer>): AgentReply {
  return reply;
}

/** `{base_url}{path}`, with the base's trailing slashes dropped. */
export const endpointUrl = (baseUrl: string, path: string) => new URL(`${baseUrl.replace(/\/+$/, "")}${path}`);

/** The protocol's headers, but for those the environment sets itself (in any case). */
export function withHeaders(
  protocol: Record<string, string>,
  environment: Record<string, string>,
): Record<string, string> {
  const set = new Set(Object.keys(environment).map((name) => name.toLowerCase()));
  const kept = Object.entries(protocol).filter(([name]) => !set.has(name.toLowerCase()));
  return { ...Object.fromEntries(kept), ...environment };
}
