import { z } from "zod";
import { Agent, AgentList, CreateAgentBody, ProjectScopedPageQuery, ResourceId } from "../../contract/index.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageThrough } from "../paging.js";
import { responses } from "../schemas.js";
import { listProjectFilter, visibleOr404 } from "../../auth/visibility.js";

export function registerAgentRoutes(api: Api, { store, clock, newId, cursors }: ApiDeps) {
  api.post("/v1/agents", {
    config: { scope: "agents:write" },
    schema: { operationId: "createAgent", tags: ["agents"], summary: "Register an agent (a name and the version under test)", body: CreateAgentBody, response: responses({ 201: Agent }) },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const projectId = resolveProjectId(principal, request.body.project_id);
      visibleOr404(principal, store.getProject(projectId), "Project", projectId);
      const [agent] = await store.write([
        "createAgent",
        {
          agent_id: newId("agent"),
          project_id: projectId,
          name: request.body.name,
          version: request.body.version,
          description: request.body.description ?? null,
          created_at: clock.now().toISOString(),
        },
      ]);
      return reply.code(201).header("location", `/v1/agents/${agent.agent_id}`).send(agent);
    },
  });

  api.get("/v1/agents", {
    config: { scope: "agents:read" },
    schema: { operationId: "listAgents", tags: ["agents"], summary: "List agents, newest first", querystring: ProjectScopedPageQuery, response: responses({ 200: AgentList }) },
    handler: async (request) => {
      const project_id = listProjectFilter(principalOf(request), request.query.project_id);
      return pageThrough(cursors, `agents|${project_id ?? ""}`, request.query, (page) => store.listAgents({ project_id }, page));
    },
  });

  api.get("/v1/agents/:agent_id", {
    config: { scope: "agents:read" },
    schema: { operationId: "getAgent", tags: ["agents"], summary: "Get an agent", params: z.strictObject({ agent_id: ResourceId }), response: responses({ 200: Agent }) },
    handler: async (request) =>
      visibleOr404(principalOf(request), store.getAgent(request.params.agent_id), "Agent", request.params.agent_id),
  });
}
