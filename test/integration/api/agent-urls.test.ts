import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import type { ApiClient } from "../../helpers/api-client.js";

const SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const OTHER_SHA = "1111111111111111111111111111111111111111";
const SECRET = "Bearer agent-key-of-staging";

describe("which agent a run reaches", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let stranger: ExampleAgent;
  let client: ApiClient;
  let agentId: string;
  let testSpecId: string;
  let keys = 0;
  const origin = () => agent.baseUrl.replace(/\/v1$/, "");

  beforeAll(async () => {
    agent = await startExampleAgent();
    stranger = await startExampleAgent();
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    const projectId = (await t.admin.post("/v1/projects", { name: "previews" })).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, PROJECT_SCOPES));
    agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "2.0.0" })).body.agent_id;
    testSpecId = (
      await client.call("POST", "/v1/test-specs", {
        body: deterministicSpecYaml({ repeat: 1 }),
        contentType: "application/yaml",
      })
    ).body.test_spec_id;
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
    await stranger.close();
  });

  const environment = async (endpoint: Record<string, unknown>) =>
    client.post("/v1/environments", {
      name: `env-${++keys}`,
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", headers: { authorization: SECRET }, ...endpoint },
    });
  const startRun = (body: Record<string, unknown>) =>
    client.post(
      "/v1/runs",
      { test_spec_id: testSpecId, ...body },
      { headers: { "idempotency-key": `agent-url-${++keys}` } },
    );
  const callsTo = (server: ExampleAgent, prefix: string) =>
    server.calls.filter((call) => call.path.startsWith(`${prefix}/v1/`));

  it("fills a base_url template from the run's source: each commit's runs call that commit's agent, which is the version tested", async () => {
    const created = await environment({ base_url: `${origin()}/{sha}/v1` });
    expect(created.status).toBe(201);
    expect(created.body.endpoint).toMatchObject({ base_url: `${origin()}/{sha}/v1`, url_pattern: null });
    for (const sha of [SHA, OTHER_SHA]) {
      const run = await startRun({
        environment_id: created.body.environment_id,
        source: { repository: "acme/refunds", commit_sha: sha },
      });
      expect(run.status).toBe(201);
      expect(run.body).toMatchObject({ agent_url: `${origin()}/${sha}/v1`, agent_version: sha });
      expect((await waitForRun(client, run.body.run_id)).verdict).toBe("PASS");
      const calls = callsTo(agent, `/${sha}`);
      expect(calls.map((call) => call.path)).toEqual(
        expect.arrayContaining([`/${sha}/v1/models`, `/${sha}/v1/chat/completions`]),
      );
      expect(calls.every((call) => call.authorization === SECRET)).toBe(true);
    }
  });

  it("fills {pull_request} too, and refuses a run whose source cannot fill its template, naming what is missing", async () => {
    const created = await environment({ base_url: `${origin()}/pr-{pull_request}/v1` });
    const run = await startRun({
      environment_id: created.body.environment_id,
      source: { repository: "acme/refunds", commit_sha: SHA, pull_request: 7 },
    });
    expect(run.body.agent_url).toBe(`${origin()}/pr-7/v1`);
    expect(callsTo(agent, "/pr-7").length).toBeGreaterThan(0);
    const runsBefore = (await t.service.store.countRows()).runs;
    const refused = await startRun({
      environment_id: created.body.environment_id,
      source: { repository: "acme/refunds", commit_sha: SHA },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: "SOURCE_INCOMPLETE",
      details: [{ path: "body.source.pull_request", message: "needed to fill {pull_request}" }],
    });
    expect((await t.service.store.countRows()).runs).toBe(runsBefore);
  });

  it("refuses a template with a placeholder it does not know, or that makes no URL", async () => {
    for (const base_url of [`${origin()}/{branch}/v1`, "https://{sha}:99999/v1", "{sha}/v1"]) {
      const refused = await environment({ base_url });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details[0].path).toBe("body.endpoint.base_url");
    }
  });

  it("lets a run name a deployment's URL that matches url_pattern; another URL is refused and gets no credentials", async () => {
    const created = await environment({ base_url: `${origin()}/main/v1`, url_pattern: `${origin()}/*/v1` });
    expect(created.status).toBe(201);
    const named = await startRun({
      environment_id: created.body.environment_id,
      agent_url: `${origin()}/deploy-123/v1`,
      source: { repository: "acme/refunds", commit_sha: SHA },
    });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ agent_url: `${origin()}/deploy-123/v1`, agent_version: SHA });
    expect(callsTo(agent, "/deploy-123")[0]).toMatchObject({ path: "/deploy-123/v1/models", authorization: SECRET });

    for (const agent_url of [`${stranger.baseUrl}`, `${origin()}/a/b/v1`, `${origin()}/deploy-123/v2`]) {
      const refused = await startRun({ environment_id: created.body.environment_id, agent_url });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: "AGENT_URL_NOT_ALLOWED",
        details: [{ path: "body.agent_url", message: `must match ${origin()}/*/v1` }],
      });
      expect(refused.body.error.message).toContain(`${origin()}/*/v1`);
    }
    expect(stranger.calls).toEqual([]);
    // A run that names no URL calls the environment's own, which must match the pattern.
    expect((await startRun({ environment_id: created.body.environment_id })).body.agent_url).toBe(
      `${origin()}/main/v1`,
    );
    const mismatched = await environment({ base_url: `${origin()}/v1`, url_pattern: `${origin()}/*/v1` });
    expect(mismatched.body.error.details).toEqual([
      { path: "body.endpoint.base_url", message: `must match ${origin()}/*/v1` },
    ]);
  });

  it("allows only the environment's own URL when it has no url_pattern", async () => {
    const created = await environment({ base_url: agent.baseUrl });
    expect(
      (await startRun({ environment_id: created.body.environment_id, agent_url: `${agent.baseUrl}/` })).status,
    ).toBe(201);
    const refused = await startRun({
      environment_id: created.body.environment_id,
      agent_url: `${origin()}/elsewhere/v1`,
    });
    expect(refused.body.error).toMatchObject({
      code: "AGENT_URL_NOT_ALLOWED",
      details: [{ path: "body.agent_url", message: `must match ${agent.baseUrl}` }],
    });
  });

  it("lets an environment gain a template and a pattern (PATCH), keeping what it does not name, and checks the result whole", async () => {
    const created = await environment({ base_url: agent.baseUrl, model: "refund-agent" });
    const id = created.body.environment_id;
    // A new url_pattern is a new place the agent's credentials may go: they are given again.
    const withoutHeaders = await client.patch(`/v1/environments/${id}`, {
      endpoint: { base_url: `${origin()}/{short_sha}/v1`, url_pattern: `${origin()}/*/v1` },
    });
    expect(withoutHeaders.status).toBe(422);
    expect(withoutHeaders.body.error).toMatchObject({
      code: "HEADERS_REQUIRED",
      details: [{ path: "body.endpoint.headers" }],
    });
    const patched = await client.patch(`/v1/environments/${id}`, {
      endpoint: {
        base_url: `${origin()}/{short_sha}/v1`,
        url_pattern: `${origin()}/*/v1`,
        headers: { authorization: SECRET },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.endpoint).toMatchObject({
      base_url: `${origin()}/{short_sha}/v1`,
      url_pattern: `${origin()}/*/v1`,
      model: "refund-agent",
      header_names: ["authorization"],
    });
    const run = await startRun({ environment_id: id, source: { repository: "acme/refunds", commit_sha: SHA } });
    expect(run.body.agent_url).toBe(`${origin()}/9fceb02/v1`);
    expect(callsTo(agent, "/9fceb02").at(-1)!.authorization).toBe(SECRET);

    // Headers are replaced whole; model null removes it.
    await client.patch(`/v1/environments/${id}`, {
      endpoint: { headers: { authorization: "Bearer rotated" }, model: null },
    });
    expect((await client.get(`/v1/environments/${id}`)).body.endpoint).toMatchObject({
      model: null,
      header_names: ["authorization"],
    });
    await startRun({ environment_id: id, source: { repository: "acme/refunds", commit_sha: OTHER_SHA } });
    expect(callsTo(agent, "/1111111").at(-1)!.authorization).toBe("Bearer rotated");

    const before = (await client.get(`/v1/environments/${id}`)).body;
    for (const [body, path] of [
      [{ endpoint: { url_pattern: `${origin()}/x/*/v1` } }, "body.endpoint.base_url"],
      [{ endpoint: {} }, "body.endpoint"],
      [{ endpoint: { protocol: "openai-chat" } }, "body.endpoint"],
      [{ name: "renamed" }, "body.name"],
    ] as const) {
      const refused = await client.patch(`/v1/environments/${id}`, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await client.get(`/v1/environments/${id}`)).body).toEqual(before);
    const otherProject = t.admin.withToken(
      await t.issueKey((await t.admin.post("/v1/projects", { name: "other" })).body.project_id, PROJECT_SCOPES),
    );
    expect((await otherProject.patch(`/v1/environments/${id}`, { endpoint: { model: "x" } })).status).toBe(404);
  });

  it("refuses a URL the pattern allows but egress does not", async () => {
    const restricted = await startTestService({ env: { ASSURE_EGRESS_ALLOWLIST: "127.0.0.1" } });
    try {
      const projectId = (await restricted.admin.post("/v1/projects", { name: "egress" })).body.project_id;
      const own = restricted.admin.withToken(await restricted.issueKey(projectId, PROJECT_SCOPES));
      const agent_id = (await own.post("/v1/agents", { name: "a", version: "1" })).body.agent_id;
      const port = new URL(agent.baseUrl).port;
      const environment_id = (
        await own.post("/v1/environments", {
          name: "e",
          agent_id,
          endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, url_pattern: `http://127.0.0.*:${port}/v1` },
        })
      ).body.environment_id;
      const test_spec_id = (
        await own.call("POST", "/v1/test-specs", {
          body: deterministicSpecYaml({ repeat: 1 }),
          contentType: "application/yaml",
        })
      ).body.test_spec_id;
      const refused = await own.post(
        "/v1/runs",
        { test_spec_id, environment_id, agent_url: `http://127.0.0.2:${port}/v1` },
        { headers: { "idempotency-key": "egress-1" } },
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe("AGENT_URL_NOT_ALLOWED");
      expect(refused.body.error.message).toMatch(/127\.0\.0\.2/);
    } finally {
      await restricted.close();
    }
  });
});
