import { z } from "zod";
import {
  CreateEnvironmentBody,
  Environment,
  EnvironmentList,
  HttpRequestTemplate,
  ResourceId,
  SAMPLE_TEMPLATE_VALUES,
  UpdateEnvironmentBody,
  compileUrlPattern,
  fillUrlTemplate,
} from "../../contract/index.js";
import type { EgressPolicy } from "../../net/egress.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { AGENT_PROTOCOLS } from "../../engine/agents/index.js";
import { ApiError } from "../../errors.js";
import { toEnvironment, type EnvironmentRow } from "../../store/environments.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";
import { visibleOr404 } from "../../auth/visibility.js";

/** An agent is called at most this many times at once unless its environment says otherwise. */
export const DEFAULT_MAX_CONCURRENCY = 16;

export function registerEnvironmentRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId, egress } = deps;

  api.post("/v1/environments", {
    config: {
      scope: "environments:write",
      creates: "environment_id",
      location: true,
      errors: ["PROJECT_ID_REQUIRED", "NOT_FOUND", "AGENT_URL_NOT_ALLOWED", "CONFLICT"],
    },
    schema: {
      operationId: "createEnvironment",
      tags: ["environments"],
      summary: "Create an environment: where an agent is deployed and how to reach it",
      body: CreateEnvironmentBody,
      response: responses({ 201: Environment }),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const { body } = request;
      const projectId = resolveProjectId(principal, body.project_id);
      visibleOr404(principal, await store.getProject(projectId), "Project", projectId);
      const agent = await store.getAgent(body.agent_id);
      if (!agent || agent.project_id !== projectId) {
        throw new ApiError("NOT_FOUND", {
          message: `Agent '${body.agent_id}' was not found in project '${projectId}'.`,
        });
      }
      checkEndpoint(body.endpoint.base_url, body.endpoint.url_pattern ?? null, egress);
      const [environment] = await store.write([
        "createEnvironment",
        {
          environment_id: newId("environment"),
          project_id: projectId,
          name: body.name,
          agent_id: agent.agent_id,
          protocol: body.endpoint.protocol,
          base_url: body.endpoint.base_url.replace(/\/+$/, ""),
          url_pattern: body.endpoint.url_pattern ?? null,
          model: body.endpoint.model ?? null,
          readiness_path: body.endpoint.readiness_path ?? AGENT_PROTOCOLS[body.endpoint.protocol].readinessPath,
          max_concurrency: body.endpoint.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
          rate_limit_per_minute: body.endpoint.rate_limit_per_minute ?? null,
          trace_wait_ms: body.endpoint.trace_wait_ms ?? null,
          headers: body.endpoint.headers ?? {},
          pricing: body.endpoint.pricing ?? {},
          http: body.endpoint.response
            ? { request: HttpRequestTemplate.parse(body.endpoint.request ?? {}), response: body.endpoint.response }
            : null,
          created_at: clock.now().toISOString(),
        },
      ]);
      if (!environment) {
        throw new ApiError("CONFLICT", {
          message: `An environment named '${body.name}' already exists in this project.`,
        });
      }
      return reply.code(201).header("location", `/v1/environments/${environment.environment_id}`).send(environment);
    },
  });

  api.patch("/v1/environments/:environment_id", {
    config: { scope: "environments:write", errors: ["AGENT_URL_NOT_ALLOWED", "HEADERS_REQUIRED", "PROTOCOL_MISMATCH"] },
    schema: {
      operationId: "updateEnvironment",
      tags: ["environments"],
      summary:
        "Change how an environment's agent is reached: its URL or template, URL pattern, model, readiness path, pace, headers or prices (each replaced whole)",
      params: z.strictObject({ environment_id: ResourceId }),
      body: UpdateEnvironmentBody,
      response: responses({ 200: Environment }),
    },
    handler: async (request) => {
      const { environment_id } = request.params;
      const current = visibleOr404(
        principalOf(request),
        await store.getEnvironmentRow(environment_id),
        "Environment",
        environment_id,
      );
      const { endpoint } = request.body;
      const base_url = endpoint.base_url?.replace(/\/+$/, "") ?? current.base_url;
      const url_pattern = endpoint.url_pattern === undefined ? current.url_pattern : endpoint.url_pattern;
      checkEndpoint(base_url, url_pattern, egress);
      assertCredentialsStay(current, base_url, url_pattern, endpoint.headers);
      for (const field of ["request", "response"] as const) {
        if (endpoint[field] !== undefined && current.protocol !== "http") {
          throw new ApiError("PROTOCOL_MISMATCH", {
            message: `The environment's protocol is ${current.protocol}: only protocol http takes a ${field}.`,
            details: [{ path: `body.endpoint.${field}`, message: `only protocol http takes a ${field}` }],
          });
        }
      }
      const [environment] = await store.write([
        "updateEnvironment",
        environment_id,
        {
          base_url,
          url_pattern,
          model: endpoint.model === undefined ? current.model : endpoint.model,
          readiness_path: endpoint.readiness_path ?? current.readiness_path,
          max_concurrency: endpoint.max_concurrency ?? current.max_concurrency,
          rate_limit_per_minute:
            endpoint.rate_limit_per_minute === undefined
              ? current.rate_limit_per_minute
              : endpoint.rate_limit_per_minute,
          trace_wait_ms: endpoint.trace_wait_ms === undefined ? current.trace_wait_ms : endpoint.trace_wait_ms,
          pricing: endpoint.pricing ?? current.pricing,
          http: current.http && {
            request: endpoint.request ?? current.http.request,
            response: endpoint.response ?? current.http.response,
          },
          ...(endpoint.headers ? { headers: endpoint.headers } : {}),
        },
      ]);
      if (!environment) throw new ApiError("NOT_FOUND", { message: `Environment '${environment_id}' was not found.` });
      return environment;
    },
  });

  registerProjectResource(api, deps, {
    name: "environment",
    scope: "environments:read",
    list: { response: EnvironmentList, items: store.listEnvironments },
    get: {
      response: Environment,
      row: store.getEnvironmentRow,
      toItem: toEnvironment,
      note: "header values are never returned",
    },
  });
}

/** Where a base URL (or template) sends its requests: scheme, host and port. */
const originOf = (baseUrl: string) => {
  const sample = fillUrlTemplate(baseUrl, SAMPLE_TEMPLATE_VALUES);
  return new URL("url" in sample ? sample.url : baseUrl).origin;
};

/**
 * An environment's credentials (its headers) go only where they were given for: moving the agent
 * to another origin, or changing the URLs runs may name (url_pattern), takes the headers again in
 * the same request — or `headers: {}` to send none.
 */
function assertCredentialsStay(
  current: EnvironmentRow,
  baseUrl: string,
  urlPattern: string | null,
  headers: Record<string, string> | undefined,
): void {
  if (headers !== undefined || current.header_names.length === 0) return;
  const moved = [
    ...(originOf(baseUrl) !== originOf(current.base_url)
      ? [`base_url now sends to ${originOf(baseUrl)}, not ${originOf(current.base_url)}`]
      : []),
    ...(urlPattern !== current.url_pattern ? ["url_pattern changes where runs may call the agent"] : []),
  ];
  if (moved.length === 0) return;
  throw new ApiError("HEADERS_REQUIRED", {
    message: `The environment's headers (its credentials) do not follow a new address: ${moved.join("; ")}. Send headers again in the same request, or headers: {} to send none.`,
    details: [{ path: "body.endpoint.headers", message: "required when base_url's origin or url_pattern changes" }],
  });
}

/**
 * An endpoint's URLs hold together: its base URL (a template filled with sample values) may be
 * reached from here, and matches its URL pattern if it has one, since a run without a URL of its
 * own calls it.
 */
function checkEndpoint(baseUrl: string, urlPattern: string | null, egress: Pick<EgressPolicy, "checkHost">): void {
  const sample = fillUrlTemplate(baseUrl, SAMPLE_TEMPLATE_VALUES);
  const url = "url" in sample ? sample.url : baseUrl;
  const refused = egress.checkHost(new URL(url).hostname);
  if (refused) {
    throw new ApiError("AGENT_URL_NOT_ALLOWED", {
      message: "The agent's base_url may not be reached from this service.",
      details: [{ path: "body.endpoint.base_url", message: refused }],
    });
  }
  if (urlPattern && !compileUrlPattern(urlPattern)!(url)) {
    throw new ApiError("AGENT_URL_NOT_ALLOWED", {
      message: "The agent's base_url must match the environment's url_pattern: runs that name no URL call it.",
      details: [{ path: "body.endpoint.base_url", message: `must match ${urlPattern}` }],
    });
  }
}
