import { CreateEnvironmentBody, HttpRequestTemplate } from "../contract/index.js";
import { AGENT_PROTOCOLS } from "../engine/agents/index.js";
import type { NewEnvironment } from "../store/environments.js";

/** The agent under test, as an environment's endpoint is written in `POST /v1/environments`. */
export const LocalEndpoint = CreateEnvironmentBody.shape.endpoint;
export type LocalEndpoint = CreateEnvironmentBody["endpoint"];

/** Calls in flight to a local agent at most, unless its endpoint says otherwise: as many as a spec may hold at once. */
export const LOCAL_MAX_CONCURRENCY = 256;

export const trimmed = (url: string) => url.replace(/\/+$/, "");

/** The environment row of a local endpoint, each default as the API's route fills it. */
export function toNewEnvironment(
  endpoint: LocalEndpoint,
  ids: Pick<NewEnvironment, "environment_id" | "project_id" | "agent_id" | "name" | "created_at">,
): NewEnvironment {
  return {
    ...ids,
    protocol: endpoint.protocol,
    base_url: trimmed(endpoint.base_url),
    url_pattern: endpoint.url_pattern ?? null,
    model: endpoint.model ?? null,
    readiness_path: endpoint.readiness_path ?? AGENT_PROTOCOLS[endpoint.protocol].readinessPath,
    // A spec's own concurrency paces a local run; the agent is the user's, on their machine.
    max_concurrency: endpoint.max_concurrency ?? LOCAL_MAX_CONCURRENCY,
    rate_limit_per_minute: endpoint.rate_limit_per_minute ?? null,
    trace_wait_ms: endpoint.trace_wait_ms ?? null,
    headers: endpoint.headers ?? {},
    pricing: endpoint.pricing ?? {},
    http: endpoint.response
      ? { request: HttpRequestTemplate.parse(endpoint.request ?? {}), response: endpoint.response }
      : null,
  };
}
