import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { failingWith } from "../../helpers/failing-with.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { runCli } from "../../helpers/child-service.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

interface AuditEvent {
  audit_event_id: string;
  occurred_at: string;
  actor: { type: string; key_id: string | null; label: string | null };
  action: string;
  resource_id: string | null;
  project_id: string | null;
  request_id: string | null;
  client_address: string | null;
}

describe("the audit trail", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;

  beforeAll(async () => {
    t = await startTestService();
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  async function allEvents(query = ""): Promise<AuditEvent[]> {
    const events: AuditEvent[] = [];
    let cursor: string | null = null;
    do {
      const response: { status: number; body: { data: AuditEvent[]; next_cursor: string | null } } = await t.admin.get(
        `/v1/audit-events?limit=5${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(response.status).toBe(200);
      events.push(...(response.body.data as AuditEvent[]));
      cursor = response.body.next_cursor;
    } while (cursor);
    return events;
  }
  const auditRows = () =>
    t.withStore(
      async (store) => (await store.sql.prepare("SELECT COUNT(*) AS n FROM audit_events").pluck().get<number>())!,
    );

  it("records every write through the API: the actor, the operation, the resource, the project, the request and the address", async () => {
    const seeded = await allEvents(`&project_id=${p.projectId}`);
    // seedProject: the project (admin key), then the agent, the environment and the spec (the project's key).
    expect(seeded.map((e) => e.action).reverse()).toEqual([
      "createProject",
      "createAgent",
      "createEnvironment",
      "createTestSpec",
    ]);
    const [spec, environment, agentEvent, project] = seeded;
    expect(project).toMatchObject({
      actor: { type: "api_key", key_id: expect.stringMatching(/^key_/) },
      resource_id: p.projectId,
      project_id: p.projectId,
      client_address: "127.0.0.1",
    });
    expect(agentEvent!.resource_id).toBe(p.agentId);
    expect(environment!.resource_id).toBe(p.environmentId);
    expect(spec!.resource_id).toBe(p.testSpecId);
    expect(spec!.actor.key_id).not.toBe(project!.actor.key_id);

    const run = await p.client.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId },
      { headers: { "idempotency-key": "audit-1" } },
    );
    expect(run.status).toBe(201);
    const webhookClient = t.admin.withToken(await t.issueKey(p.projectId, ["webhooks:write", "webhooks:read"]));
    const webhook = await webhookClient.post("/v1/webhooks", { url: "http://127.0.0.1:9/hook" });
    expect(webhook.status).toBe(201);
    const id = webhook.body.webhook_id as string;
    expect((await webhookClient.patch(`/v1/webhooks/${id}`, { description: "audited" })).status).toBe(200);
    expect((await webhookClient.post(`/v1/webhooks/${id}/rotate-secret`, {})).status).toBe(200);
    expect((await webhookClient.delete(`/v1/webhooks/${id}`)).status).toBe(204);

    const latest = (await allEvents(`&project_id=${p.projectId}`)).slice(0, 5);
    expect(latest.map((e) => [e.action, e.resource_id])).toEqual([
      ["deleteWebhook", id],
      ["rotateWebhookSecret", id],
      ["updateWebhook", id],
      ["createWebhook", id],
      ["createRun", run.body.run_id],
    ]);
    expect(latest[0]!.request_id).toMatch(/^req_/);
    expect(new Set(latest.map((e) => e.request_id)).size).toBe(5);
  });

  it("records nothing for a refused write, nor for a replay that writes nothing", async () => {
    expect((await t.admin.post("/v1/projects", { name: "taken" })).status).toBe(201);
    const before = await auditRows();
    expect((await t.admin.post("/v1/projects", { name: "taken" })).status).toBe(409);
    expect(
      (
        await p.client.post(
          "/v1/runs",
          { test_spec_id: p.testSpecId, environment_id: p.environmentId },
          { headers: { "idempotency-key": "audit-1" } },
        )
      ).status,
    ).toBe(200);
    expect((await t.admin.post("/v1/projects", { name: "" })).status).toBe(400);
    expect(
      (
        await p.client.post(
          "/v1/runs",
          { test_spec_id: p.testSpecId, environment_id: "env_missing" },
          { headers: { "idempotency-key": "audit-2" } },
        )
      ).status,
    ).toBe(404);
    expect((await t.anonymous.post("/v1/projects", { name: "no-key" })).status).toBe(401);
    expect((await p.client.post("/v1/projects", { name: "no-scope" })).status).toBe(403);
    expect(await auditRows()).toBe(before);
  });

  it("records the CLI's writes, and keys can expire", async () => {
    const env = t.databaseEnv;
    const created = await runCli(
      ["keys", "create", "--project", p.projectId, "--scopes", "runs:read", "--name", "ci", "--expires-in", "2s"],
      env,
    );
    expect(created.status).toBe(0);
    const key = created.json() as { key_id: string; token: string; expires_at: string };
    expect(Date.parse(key.expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    expect((await t.anonymous.get("/v1/runs", { token: key.token })).status).toBe(200);
    expect((await runCli(["keys", "create", "--admin", "--expires-in", "soon"], env)).status).toBe(2);
    expect((await runCli(["pages", "rotate-link-secret"], env)).status).toBe(0);
    expect((await runCli(["keys", "revoke", key.key_id], env)).status).toBe(0);
    // Revoked: refused at once, no cache outliving it.
    expect((await t.anonymous.get("/v1/runs", { token: key.token })).status).toBe(401);

    const cli = await allEvents("&actor=cli");
    expect(cli.map((e) => [e.action, e.resource_id])).toEqual([
      ["keys.revoke", key.key_id],
      ["pages.rotate-link-secret", "page_link_secret"],
      ["keys.create", key.key_id],
    ]);
    expect(cli[0]).toMatchObject({
      actor: { type: "cli", label: "assure keys revoke" },
      request_id: null,
      project_id: p.projectId,
    });
  });

  it("refuses an expired key with 401, and notes when each key was last used", async () => {
    const created = (
      await runCli(["keys", "create", "--project", p.projectId, "--scopes", "runs:read", "--expires-in", "1s"], {
        ...t.databaseEnv,
      })
    ).json() as { key_id: string; token: string; expires_at: string };
    expect((await t.anonymous.get("/v1/runs", { token: created.token })).status).toBe(200);
    await waitFor(() => Date.now() > Date.parse(created.expires_at), "the key to expire");
    const expired = await t.anonymous.get("/v1/runs", { token: created.token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
    const listed = await waitFor(async () => {
      const keys = (await runCli(["keys", "list"], t.databaseEnv)).json() as {
        key_id: string;
        last_used_at: string | null;
        expires_at: string | null;
      }[];
      const mine = keys.find((k) => k.key_id === created.key_id);
      return mine?.last_used_at ? mine : undefined;
    }, "last_used_at written");
    expect(listed.expires_at).toBe(created.expires_at);
    expect(Date.parse(listed.last_used_at!)).toBeLessThanOrEqual(Date.parse(created.expires_at));
  });

  it("is read with audit:read only, a project's key seeing its own project's events", async () => {
    expect((await p.client.get("/v1/audit-events")).status).toBe(403);
    const auditor = t.admin.withToken(await t.issueKey(p.projectId, ["audit:read"]));
    const own = await auditor.get("/v1/audit-events?limit=200");
    expect(own.status).toBe(200);
    expect(own.body.data.length).toBeGreaterThan(0);
    expect(own.body.data.every((e: AuditEvent) => e.project_id === p.projectId)).toBe(true);
    expect((await auditor.get("/v1/audit-events?project_id=prj_other")).status).toBe(404);
    const creates = await t.admin.get(`/v1/audit-events?action=createRun&project_id=${p.projectId}`);
    expect(creates.body.data.map((e: AuditEvent) => e.action)).toEqual(["createRun"]);
    const since = await t.admin.get(
      `/v1/audit-events?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(since.body.data).toEqual([]);
  });

  it("is append-only: the database itself refuses to change or remove an event", async () => {
    await t.withStore(async (store) => {
      await expect(store.sql.prepare("UPDATE audit_events SET action = 'nothing'").run()).rejects.toMatchObject(
        failingWith(/append-only/),
      );
      await expect(store.sql.prepare("DELETE FROM audit_events").run()).rejects.toMatchObject(
        failingWith(/append-only/),
      );
    });
  });
});
