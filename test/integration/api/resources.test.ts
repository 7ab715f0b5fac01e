import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EXAMPLE_SPEC_YAML, type SeededProject } from "../../helpers/seed.js";
import { startSeededService, type AgentEndpoint } from "../../helpers/seeded-service.js";
import type { TestService } from "../../helpers/service.js";

describe("resources", () => {
  let t: TestService;
  let agent: AgentEndpoint;
  let p: SeededProject;
  let close: () => Promise<void>;

  beforeAll(async () => ({ t, agent, p, close } = await startSeededService()));
  afterAll(() => close());

  it("serves health and the OpenAPI 3.1 document without a key", async () => {
    expect((await t.anonymous.get("/healthz")).body).toEqual({ status: "ok" });
    const doc = await t.anonymous.get("/v1/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe("3.1.0");
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/v1/runs", "/v1/runs/{run_id}", "/v1/runs/{run_id}/evidence", "/v1/test-specs"]),
    );
    expect(doc.body.components.schemas.Run).toBeDefined();
  });

  it("publishes the spec format as JSON Schema", async () => {
    const schema = await t.anonymous.get("/v1/schemas/test-spec.json");
    expect(schema.status).toBe(200);
    expect(schema.headers.get("content-type")).toContain("application/schema+json");
    expect(schema.body.properties.scenarios).toBeDefined();
    expect(schema.body.required).toEqual(expect.arrayContaining(["schema_version", "name", "gates"]));
  });

  it("creates and reads projects, agents and environments", async () => {
    const project = await t.admin.get(`/v1/projects/${p.projectId}`);
    expect(project.body).toMatchObject({ project_id: p.projectId });
    const agentRecord = await p.client.get(`/v1/agents/${p.agentId}`);
    expect(agentRecord.body).toMatchObject({ name: "refund-agent", version: "1.4.2", project_id: p.projectId });
    const environment = await p.client.get(`/v1/environments/${p.environmentId}`);
    expect(environment.body.endpoint).toEqual({
      protocol: "openai-chat",
      base_url: agent.baseUrl,
      url_pattern: null,
      model: "refund-agent",
      readiness_path: "/models",
      max_concurrency: 16,
      rate_limit_per_minute: null,
      header_names: ["authorization"],
      pricing: {},
      request: null,
      response: null,
      trace_wait_ms: null,
    });
  });

  it("never returns environment header values", async () => {
    for (const path of [`/v1/environments/${p.environmentId}`, "/v1/environments"]) {
      const response = await p.client.get(path);
      expect(response.text).not.toContain("agent-secret");
    }
  });

  it("refuses duplicate names with 409", async () => {
    const again = await t.admin.post("/v1/projects", {
      name: (await t.admin.get(`/v1/projects/${p.projectId}`)).body.name,
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("CONFLICT");
    const env = await p.client.post("/v1/environments", {
      name: "staging",
      agent_id: p.agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl },
    });
    expect(env.status).toBe(409);
  });

  it("accepts the example spec as it is, in YAML, with a content-addressed version", async () => {
    const spec = await p.client.get(`/v1/test-specs/${p.testSpecId}`);
    expect(spec.body).toMatchObject({ name: "refund-agent", version_number: 1, project_id: p.projectId });
    expect(spec.body.spec_version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(spec.body.spec.scenarios).toHaveLength(2);
    expect(spec.body.spec.gates.map((g: { id: string }) => g.id)).toEqual(["DET", "TASK", "SEC"]);
  });

  it("gives the same document the same version, in JSON or YAML, and adds a version on change", async () => {
    const current = (await p.client.get(`/v1/test-specs/${p.testSpecId}`)).body;
    const sameAsJson = await p.client.post("/v1/test-specs", { spec: current.spec });
    expect(sameAsJson.status).toBe(200);
    expect(sameAsJson.body).toMatchObject({
      test_spec_id: p.testSpecId,
      spec_version: current.spec_version,
      version_number: 1,
    });

    const changed = await p.client.call("POST", "/v1/test-specs", {
      body: EXAMPLE_SPEC_YAML.replace("repeat: 3", "repeat: 5"),
      contentType: "application/yaml",
    });
    expect(changed.status).toBe(201);
    expect(changed.body).toMatchObject({ test_spec_id: p.testSpecId, version_number: 2 });
    expect(changed.body.spec_version).not.toBe(current.spec_version);

    const pinned = await p.client.get(
      `/v1/test-specs/${p.testSpecId}?spec_version=${encodeURIComponent(current.spec_version)}`,
    );
    expect(pinned.body).toMatchObject({ version_number: 1, spec_version: current.spec_version });
    expect(pinned.body.spec.defaults.repeat).toBe(3);
  });

  it("names the failing path and line of an invalid YAML spec", async () => {
    const broken = EXAMPLE_SPEC_YAML.replace("tool_not_called: delete_account", "tool_not_called: delete_acount");
    const response = await p.client.call("POST", "/v1/test-specs", { body: broken, contentType: "application/yaml" });
    // Of the spec's shape, but it names a tool it does not define: it does not hold together.
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe("SPEC_INCONSISTENT");
    const line = EXAMPLE_SPEC_YAML.split("\n").findIndex((l) => l.includes("tool_not_called: delete_account")) + 1;
    expect(response.body.error.details).toEqual([
      {
        path: "spec.scenarios[0].expect[1].tool_not_called",
        message: `tool 'delete_acount' is not defined under tools (line ${line})`,
      },
    ]);
  });

  it("lists each resource newest first", async () => {
    const second = await p.client.post("/v1/agents", { name: "second-agent", version: "2" });
    const agents = await p.client.get("/v1/agents");
    expect(agents.body.data.map((a: { agent_id: string }) => a.agent_id)).toEqual([second.body.agent_id, p.agentId]);
    expect(agents.body).toMatchObject({ has_more: false, next_cursor: null });
    expect((await p.client.get("/v1/test-specs")).body.data).toHaveLength(1);
    expect((await p.client.get("/v1/projects")).body.data.map((x: { project_id: string }) => x.project_id)).toEqual([
      p.projectId,
    ]);
  });
});
