import { readFileSync } from "node:fs";
import type { TestService } from "./service.js";
import type { ApiClient } from "./api-client.js";

export const EXAMPLE_SPEC_YAML = readFileSync(new URL("../../examples/refund-agent.yaml", import.meta.url), "utf8");

/** Scopes a project's CI key typically has: everything but administration. */
export const PROJECT_SCOPES = [
  "runs:read",
  "runs:execute",
  "specs:read",
  "specs:write",
  "evidence:read",
  "projects:read",
  "agents:read",
  "agents:write",
  "environments:read",
  "environments:write",
];

export interface SeededProject {
  projectId: string;
  agentId: string;
  environmentId: string;
  testSpecId: string;
  specVersion: string;
  /** A key bound to this project with PROJECT_SCOPES. */
  client: ApiClient;
  token: string;
}

let counter = 0;

/** Project → agent → environment → spec, created through the API as a user would. */
export async function seedProject(t: TestService, agentBaseUrl: string, name = `project-${++counter}`): Promise<SeededProject> {
  const project = await t.admin.post("/v1/projects", { name });
  if (project.status !== 201) throw new Error(`seed project: ${project.text}`);
  const projectId = project.body.project_id as string;
  const token = t.issueKey(projectId, PROJECT_SCOPES);
  const client = t.admin.withToken(token);
  const agent = await client.post("/v1/agents", { name: "refund-agent", version: "1.4.2" });
  const environment = await client.post("/v1/environments", {
    name: "staging",
    agent_id: agent.body.agent_id,
    endpoint: { protocol: "openai-chat", base_url: agentBaseUrl, model: "example-agent", headers: { authorization: "Bearer agent-secret" } },
  });
  if (environment.status !== 201) throw new Error(`seed environment: ${environment.text}`);
  const spec = await client.call("POST", "/v1/test-specs", { body: EXAMPLE_SPEC_YAML, contentType: "application/yaml" });
  if (spec.status !== 201) throw new Error(`seed spec: ${spec.text}`);
  return {
    projectId,
    agentId: agent.body.agent_id,
    environmentId: environment.body.environment_id,
    testSpecId: spec.body.test_spec_id,
    specVersion: spec.body.spec_version,
    client,
    token,
  };
}
