import { Agent, AgentList, CreateAgentBody } from "../../contract/index.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";
import { visibleOr404 } from "../../auth/visibility.js";

export function registerAgentRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId } = deps;

  api.post("/v1/agents", {
    config: {
      scope: "agents:write",
      creates: "agent_id",
      location: true,
      errors: ["PROJECT_ID_REQUIRED", "NOT_FOUND"],
    },
    schema: {
      operationId: "createAgent",
      tags: ["agents"],
      summary: "Register an agent (a name and the version under test)",
      body: CreateAgentBody,
      response: responses({ 201: Agent }),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const projectId = resolveProjectId(principal, request.body.project_id);
      visibleOr404(principal, await store.getProject(projectId), "Project", projectId);
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

  registerProjectResource(api, deps, {
    name: "agent",
    scope: "agents:read",
    list: { response: AgentList, items: store.listAgents },
    get: { response: Agent, row: store.getAgent, toItem: (agent) => agent },
  });
}
