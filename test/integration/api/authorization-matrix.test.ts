import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { parseToken } from "../../../server/auth/api-keys.js";
import { issueApiKey } from "../../../server/auth/issue-api-key.js";
import { ADMIN_ONLY_SCOPES, SCOPES } from "../../../server/auth/scopes.js";
import { systemClock } from "../../../server/clock.js";
import { makeIdGenerator } from "../../../server/ids.js";
import { readConversations, startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import { uploadOf } from "../../helpers/uploads.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

/**
 * Every route of the route table (as registered, so a new route is covered without touching this
 * file) × every way a credential can be wrong: the answer the README documents.
 */
describe("the authorization matrix", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let receiver: WebhookReceiver;
  let a: SeededProject;
  const params: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const PROJECT_KEY_SCOPES = SCOPES.filter((scope) => !ADMIN_ONLY_SCOPES.includes(scope));

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1", ASSURE_WEBHOOK_RETRY_SCALE: "0.001" } });
    agent = await startExampleAgent();
    receiver = await startWebhookReceiver();
    a = await seedProject(t, agent.baseUrl);
    const b = await seedProject(t, agent.baseUrl);
    const owner = t.admin.withToken(await t.issueKey(a.projectId, [...PROJECT_KEY_SCOPES]));
    const webhook = (await owner.post("/v1/webhooks", { url: receiver.url })).body.webhook_id as string;
    const { run_id } = await startRun(owner, { test_spec_id: a.testSpecId, environment_id: a.environmentId });
    await waitForRun(owner, run_id);
    const conversation = (await readConversations(owner, run_id))[0]!.conversation_id;
    const evaluation = (await owner.get(`/v1/runs/${run_id}/evaluations?limit=1`)).body.data[0].evaluation_id as string;
    const delivery = await waitFor(
      async () =>
        (await owner.get(`/v1/webhooks/${webhook}/deliveries?limit=1`)).body.data[0]?.delivery_id as string | undefined,
      "a delivery",
    );
    Object.assign(params, {
      project_id: a.projectId,
      agent_id: a.agentId,
      environment_id: a.environmentId,
      test_spec_id: a.testSpecId,
      run_id,
      sequence: "1",
      conversation_id: conversation,
      turn: "1",
      evaluation_id: evaluation,
      finding_id: "fnd_none",
      webhook_id: webhook,
      delivery_id: delivery,
      decision_id: "dec_none",
      waiver_id: "wvr_none",
      approval_id: "apv_none",
    });

    tokens.wrongProject = await t.issueKey(b.projectId, [...PROJECT_KEY_SCOPES]);
    const revoked = await t.issueKey(a.projectId, [...PROJECT_KEY_SCOPES]);
    await t.revokeKey(parseToken(revoked)!.keyId);
    tokens.revoked = revoked;
    await t.withStore(async (operator) => {
      tokens.expired = (
        await issueApiKey(
          { store: operator, clock: systemClock, newId: makeIdGenerator(systemClock) },
          {
            projectId: a.projectId,
            scopes: [...PROJECT_KEY_SCOPES],
            expiresAt: new Date(Date.now() - 1000).toISOString(),
          },
        )
      ).token;
    });
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
    await receiver.close();
  });

  const routes = () => t.service.api.routeTable.filter((route) => route.scope !== undefined && route.method !== "HEAD");
  const pathOf = (url: string) => url.replace(/:([a-z_]+)/g, (_, name: string) => params[name] ?? `${name}_unknown`);
  const call = (route: { method: string; url: string }, token: string | undefined) =>
    t.service.api.inject({
      method: route.method as "GET",
      url: pathOf(route.url),
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(route.method === "GET" || route.method === "DELETE"
          ? {}
          : { "content-type": "application/json", "idempotency-key": "matrix" }),
      },
      ...(route.method === "GET" || route.method === "DELETE" ? {} : { payload: "{}" }),
    });
  const codeOf = (body: string) => (JSON.parse(body) as { error?: { code: string } }).error?.code;

  it("covers every route with a scope", () => {
    expect(routes().length).toBeGreaterThanOrEqual(45);
    // traces:write is a project key's scope, for an agent's OTLP exports only.
    expect(PROJECT_KEY_SCOPES).toContain("traces:write");
    expect(routes().filter((route) => route.scope === "traces:write")).toEqual([
      expect.objectContaining({ method: "POST", url: "/otlp/v1/traces" }),
    ]);
  });

  it("lets only a key of the spec's project with runs:execute upload a run", async () => {
    expect(routes().filter((route) => route.url === "/v1/runs/uploads")).toEqual([
      expect.objectContaining({ method: "POST", scope: "runs:execute" }),
    ]);
    const owner = t.admin.withToken(await t.issueKey(a.projectId, [...PROJECT_KEY_SCOPES]));
    const body = await uploadOf(owner, params.run_id!);
    const upload = (token: string) =>
      t.admin
        .withToken(token)
        .post("/v1/runs/uploads", body, { headers: { "idempotency-key": `matrix-${token.slice(-6)}` } });
    const unscoped = await upload(
      await t.issueKey(
        a.projectId,
        PROJECT_KEY_SCOPES.filter((s) => s !== "runs:execute"),
      ),
    );
    expect([unscoped.status, unscoped.body.error.code]).toEqual([403, "INSUFFICIENT_SCOPE"]);
    const elsewhere = await upload(tokens.wrongProject!);
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, "NOT_FOUND"]);
    const allowed = await upload(await t.issueKey(a.projectId, ["runs:execute"]));
    expect(allowed.status).toBe(201);
    await waitForRun(owner, allowed.body.run_id);
  });

  it.each(["none", "expired", "revoked"])(
    "answers 401 UNAUTHENTICATED to every route for a key that is %s",
    async (kind) => {
      const wrong: string[] = [];
      for (const route of routes()) {
        const response = await call(route, kind === "none" ? undefined : tokens[kind]);
        if (response.statusCode !== 401 || codeOf(response.body) !== "UNAUTHENTICATED") {
          wrong.push(`${route.method} ${route.url} → ${response.statusCode} ${response.body.slice(0, 120)}`);
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it("answers 403 INSUFFICIENT_SCOPE to every route for the project's key without the route's scope", async () => {
    const wrong: string[] = [];
    for (const route of routes()) {
      const token = await t.issueKey(
        a.projectId,
        PROJECT_KEY_SCOPES.filter((scope) => scope !== route.scope),
      );
      const response = await call(route, token);
      if (response.statusCode !== 403 || codeOf(response.body) !== "INSUFFICIENT_SCOPE") {
        wrong.push(`${route.method} ${route.url} → ${response.statusCode}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("never shows or changes another project's resources: 404 as if they did not exist", async () => {
    const wrong: string[] = [];
    for (const route of routes()) {
      const response = await call(route, tokens.wrongProject);
      const status = response.statusCode;
      const byId = route.url.includes(":");
      const adminOnly = route.scope !== undefined && ADMIN_ONLY_SCOPES.includes(route.scope);
      // An OTLP export attaches spans to the caller's own project's conversations only: another's are rejected, not found.
      const expected = adminOnly
        ? [403]
        : route.scope === "traces:write"
          ? [200]
          : byId
            ? route.method === "GET" || route.method === "DELETE"
              ? [404]
              : [400, 404]
            : route.method === "GET"
              ? [200]
              : [400, 404, 201];
      if (!expected.includes(status)) {
        wrong.push(`${route.method} ${route.url} → ${status} (expected ${expected.join("/")})`);
      }
      // Whatever it answers, nothing of project A is in it but what the caller sent (a 404 names the id asked for).
      const asked = pathOf(route.url);
      for (const id of Object.values(params)) {
        if (id.length > 8 && !asked.includes(id) && response.body.includes(id)) {
          wrong.push(`${route.method} ${route.url} shows ${id}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
