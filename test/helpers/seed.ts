import type { EndpointProtocol } from "../../server/contract/index.js";
import { readFileSync } from "node:fs";
import { parse, stringify } from "yaml";
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

export interface SeedOptions {
  name?: string;
  /** The environment's model: with the example agent, `refund-agent+<behaviour>` picks a misbehaviour. */
  model?: string;
  specYaml?: string;
  /** How the environment reaches the agent (its base URL must be the protocol's: `agent.baseUrlFor(protocol)`). */
  protocol?: EndpointProtocol;
}

/** Project → agent → environment → spec, created through the API as a user would. */
export async function seedProject(
  t: TestService,
  agentBaseUrl: string,
  {
    name = `project-${++counter}`,
    model = "refund-agent",
    specYaml = EXAMPLE_SPEC_YAML,
    protocol = "openai-chat",
  }: SeedOptions = {},
): Promise<SeededProject> {
  const project = await t.admin.post("/v1/projects", { name });
  if (project.status !== 201) throw new Error(`seed project: ${project.text}`);
  const projectId = project.body.project_id as string;
  const token = await t.issueKey(projectId, PROJECT_SCOPES);
  const client = t.admin.withToken(token);
  const agent = await client.post("/v1/agents", { name: "refund-agent", version: "1.4.2" });
  const environment = await client.post("/v1/environments", {
    name: "staging",
    agent_id: agent.body.agent_id,
    endpoint: {
      protocol,
      base_url: agentBaseUrl,
      model,
      headers: { authorization: "Bearer agent-secret" },
    },
  });
  if (environment.status !== 201) throw new Error(`seed environment: ${environment.text}`);
  const spec = await client.call("POST", "/v1/test-specs", { body: specYaml, contentType: "application/yaml" });
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

/** The example spec's deterministic part only: its scenarios' expectations and the DET gate. */
export function deterministicSpecYaml({
  repeat = 3,
  timeout_ms = 30000,
  ...defaults
}: { repeat?: number; timeout_ms?: number; concurrency?: number; run_timeout_ms?: number } = {}): string {
  const spec = parse(EXAMPLE_SPEC_YAML) as {
    name: string;
    defaults: Record<string, number>;
    scenarios: { metrics?: unknown }[];
    security?: unknown;
    gates: { id: string }[];
  };
  spec.name = "refund-agent-deterministic";
  spec.defaults = { ...spec.defaults, repeat, timeout_ms, ...defaults };
  for (const scenario of spec.scenarios) delete scenario.metrics;
  delete spec.security;
  spec.gates = spec.gates.filter((gate) => gate.id === "DET");
  return stringify(spec);
}

/**
 * A project, its agent and a staging environment, created with an admin client (of a service in a
 * child process, say); `addSpec` adds a spec from its YAML and returns its id (through another
 * client, once the service was restarted).
 */
export async function seedOverApi(
  client: ApiClient,
  { name, agentBaseUrl, maxConcurrency }: { name: string; agentBaseUrl: string; maxConcurrency?: number },
) {
  const projectId = (await client.post("/v1/projects", { name })).body.project_id as string;
  const agentId = (await client.post("/v1/agents", { project_id: projectId, name: "refund-agent", version: "3" })).body
    .agent_id as string;
  const environment = await client.post("/v1/environments", {
    project_id: projectId,
    name: "staging",
    agent_id: agentId,
    endpoint: {
      protocol: "openai-chat",
      base_url: agentBaseUrl,
      model: "refund-agent",
      ...(maxConcurrency ? { max_concurrency: maxConcurrency } : {}),
    },
  });
  if (environment.status !== 201) throw new Error(`seed environment: ${environment.text}`);
  return {
    projectId,
    environmentId: environment.body.environment_id as string,
    async addSpec(yaml: string, through: ApiClient = client): Promise<string> {
      const spec = await through.call("POST", `/v1/test-specs?project_id=${projectId}`, {
        body: yaml,
        contentType: "application/yaml",
      });
      if (spec.status !== 201) throw new Error(`seed spec: ${spec.text}`);
      return spec.body.test_spec_id as string;
    },
  };
}
