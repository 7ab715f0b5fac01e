import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startAgentEndpoint } from "../../helpers/agent-endpoint.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

describe("authentication and scopes", () => {
  let t: TestService;
  let agent: Awaited<ReturnType<typeof startAgentEndpoint>>;
  let mine: SeededProject;
  let theirs: SeededProject;

  beforeAll(async () => {
    t = await startTestService();
    agent = await startAgentEndpoint();
    mine = await seedProject(t, agent.baseUrl);
    theirs = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  it.each([
    ["no Authorization header", undefined],
    ["a malformed header", "Token abc"],
    ["a token of the wrong shape", "Bearer assure_nope"],
    ["an unknown key", "Bearer assure_01m80gb85xze5m92wm73agd329_k_N5K0OPVA47QwgijJRSSlCT6FuiBVSnJ9XPpSHpoSc"],
  ])("answers 401 UNAUTHENTICATED to %s", async (_case, authorization) => {
    const response = await t.anonymous.get("/v1/runs", { headers: authorization ? { authorization } : {} });
    expect(response.status).toBe(401);
    expect(response.body.error).toMatchObject({ code: "UNAUTHENTICATED", retryable: false });
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("answers 401 to a key whose secret is wrong", async () => {
    const forged = mine.token.slice(0, -4) + (mine.token.endsWith("AAAA") ? "BBBB" : "AAAA");
    const response = await t.anonymous.get("/v1/runs", { token: forged });
    expect(response.status).toBe(401);
  });

  it("answers 401 once a key is revoked", async () => {
    const token = await t.issueKey(mine.projectId, ["runs:read"]);
    expect((await t.anonymous.get("/v1/runs", { token })).status).toBe(200);
    const keyId = `key_${token.split("_")[1]}`;
    expect(await t.revokeKey(keyId)).toBe(true);
    expect((await t.anonymous.get("/v1/runs", { token })).status).toBe(401);
  });

  it("answers 403 naming the missing scope, and read never implies write", async () => {
    const readOnly = t.admin.withToken(await t.issueKey(mine.projectId, ["runs:read", "evidence:read", "specs:read"]));
    const create = await readOnly.post(
      "/v1/runs",
      { test_spec_id: mine.testSpecId, environment_id: mine.environmentId },
      {
        headers: { "idempotency-key": "k-1" },
      },
    );
    expect(create.status).toBe(403);
    expect(create.body.error).toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    expect(create.body.error.message).toContain("runs:execute");
    const spec = await readOnly.call("POST", "/v1/test-specs", {
      body: "schema_version: '1'",
      contentType: "application/yaml",
    });
    expect(spec.status).toBe(403);
    expect(spec.body.error.message).toContain("specs:write");
  });

  it("checks the scope before reading the body", async () => {
    const readOnly = t.admin.withToken(await t.issueKey(mine.projectId, ["runs:read"]));
    const response = await readOnly.call("POST", "/v1/agents", { body: "{not json", contentType: "application/json" });
    expect(response.status).toBe(403);
  });

  it("answers 404 for another project's resources, as if they did not exist", async () => {
    for (const path of [
      `/v1/projects/${theirs.projectId}`,
      `/v1/agents/${theirs.agentId}`,
      `/v1/environments/${theirs.environmentId}`,
      `/v1/test-specs/${theirs.testSpecId}`,
    ]) {
      const response = await mine.client.get(path);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("NOT_FOUND");
    }
    const listing = await mine.client.get(`/v1/agents?project_id=${theirs.projectId}`);
    expect(listing.status).toBe(404);
    const create = await mine.client.post("/v1/agents", { project_id: theirs.projectId, name: "x", version: "1" });
    expect(create.status).toBe(404);
    const run = await mine.client.post(
      "/v1/runs",
      { test_spec_id: mine.testSpecId, environment_id: theirs.environmentId },
      { headers: { "idempotency-key": "cross-project" } },
    );
    expect(run.status).toBe(404);
  });

  it("lets only admin keys create projects", async () => {
    const withWriteLikeScopes = t.admin.withToken(await t.issueKey(mine.projectId, ["projects:read"]));
    expect((await withWriteLikeScopes.post("/v1/projects", { name: "nope" })).status).toBe(403);
    await expect(t.issueKey(mine.projectId, ["projects:write"])).rejects.toThrow(/admin/);
  });

  it("asks an admin key to name the project", async () => {
    const response = await t.admin.post("/v1/agents", { name: "a", version: "1" });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: "project_id", message: "required with an admin key" }]);
  });

  it("leaves the public documents public", async () => {
    for (const path of ["/healthz", "/v1/openapi.json", "/v1/schemas/test-spec.json"]) {
      expect((await t.anonymous.get(path)).status).toBe(200);
    }
  });
});
