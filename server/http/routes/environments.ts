import {
  CreateEnvironmentBody,
  Environment,
  EnvironmentList,
  } from "../../contract/index.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { AGENT_PROTOCOLS } from "../../engine/agents/index.js";
import { ApiError } from "../../errors.js";
import { toEnvironment } from "../../store/environments.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";
import { visibleOr404 } from "../../auth/visibility.js";

export function registerEnvironmentRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId, egress } = deps;

  api.post("/v1/environments", {
    config: { scope: "environments:write" },
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
      visibleOr404(principal, store.getProject(projectId), "Project", projectId);
      const agent = store.getAgent(body.agent_id);
      if (!agent || agent.project_id !== projectId) {
        throw new ApiError("NOT_FOUND", { message: `Agent '${body.agent_id}' was not found in project '${projectId}'.` });
      }
      const refused = egress.checkHost(new URL(body.endpoint.base_url).hostname);
      if (refused) {
        throw new ApiError("VALIDATION_FAILED", {
          message: "The agent's base_url may not be reached from this service.",
          details: [{ path: "body.endpoint.base_url", message: refused }],
        });
      }
      const [environment] = await store.write([
        "createEnvironment",
        {
          environment_id: newId("environment"),
          project_id: projectId,
          name: body.name,
          agent_id: agent.agent_id,
          protocol: body.endpoint.protocol,
          base_url: body.endpoint.base_url.replace(/\/+$/, ""),
          model: body.endpoint.model ?? null,
          readiness_path: body.endpoint.readiness_path ?? AGENT_PROTOCOLS[body.endpoint.protocol].readinessPath,
          headers: body.endpoint.headers ?? {},
          created_at: clock.now().toISOString(),
        },
      ]);
      if (!environment) throw new ApiError("CONFLICT", { message: `An environment named '${body.name}' already exists in this project.` });
      return reply.code(201).header("location", `/v1/environments/${environment.environment_id}`).send(environment);
    },
  });

  registerProjectResource(api, deps, {
    name: "environment",
    scope: "environments:read",
    list: { response: EnvironmentList, items: store.listEnvironments },
    get: { response: Environment, row: store.getEnvironmentRow, toItem: toEnvironment, note: "header values are never returned" },
  });
}
