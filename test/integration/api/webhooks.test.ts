import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { makeWebhookConsumer } from "../../../examples/webhook-consumer.js";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

describe("outbound webhooks", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;
  let client: ApiClient;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "2", ASSURE_WEBHOOK_RETRY_SCALE: "0.001" } });
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    client = t.admin.withToken(
      await t.issueKey(p.projectId, [
        ...PROJECT_SCOPES,
        "webhooks:read",
        "webhooks:write",
        "releases:read",
        "releases:write",
      ]),
    );
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
    await agent.close();
  });

  async function receiver() {
    const r = await startWebhookReceiver();
    receivers.push(r);
    return r;
  }
  async function register(url: string, extra: Record<string, unknown> = {}) {
    const created = await client.post("/v1/webhooks", { url, ...extra });
    expect(created.status).toBe(201);
    return created.body as { webhook_id: string; secret: string };
  }
  /** A run of the project, to its end, and its trace as the API serves it. */
  async function runToEnd() {
    const { run_id } = await startRun(client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await waitForRun(client, run_id);
    return { run_id, trace: await readTrace(client, run_id) };
  }
  const verify = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
    new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>);

  it("sends every event of the project's runs, each signed per Standard Webhooks and as the trace serves it", async () => {
    const r = await receiver();
    const webhook = await register(r.url, { description: "audit" });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await client.get(`/v1/webhooks/${webhook.webhook_id}`)).body).not.toHaveProperty("secret");

    const { run_id, trace } = await runToEnd();
    await waitFor(() => trace.every((e) => r.events().has(e.event_id)), "every event delivered");
    for (const delivery of r.received) {
      expect(verify(webhook.secret, delivery)).toBeDefined(); // throws if the signature does not verify
      expect(delivery.headers["content-type"]).toBe("application/json");
    }
    // Not corrupted: each body is the trace's own entry.
    const served = (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data as { event_id: string }[];
    for (const entry of served) expect(JSON.parse(r.events().get(entry.event_id)!)).toEqual(entry);
    expect([...r.events().keys()].filter((id) => trace.some((e) => e.event_id === id))).toHaveLength(trace.length);
    // Every attempt is listed.
    const attempts = await waitFor(async () => {
      const data = (await client.get(`/v1/webhooks/${webhook.webhook_id}/deliveries?limit=200`)).body.data;
      return data.length >= trace.length ? data : undefined;
    }, "every attempt recorded");
    expect(attempts[0]).toMatchObject({
      delivery_id: expect.stringMatching(/^dlv_/),
      attempt: 1,
      response_status: 204,
      error: null,
      next_attempt_at: null,
    });
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("sends only the event types asked for, and the decisions' updates", async () => {
    const r = await receiver();
    const webhook = await register(r.url, { event_types: ["run.status_changed", "release_decision.updated"] });
    const { run_id, trace } = await runToEnd();
    await client.post("/v1/release-decisions", { subject: { run_ids: [run_id] } });
    await waitFor(
      () => r.received.some((d) => JSON.parse(d.body).type === "release_decision.updated"),
      "the decision's update",
    );
    const moves = trace.filter((e) => e.type === "run.status_changed");
    expect(moves.length).toBe(3); // QUEUED → RUNNING → EVALUATING → COMPLETED
    await waitFor(() => moves.every((e) => r.events().has(e.event_id)), "the run's moves");
    expect(new Set(r.received.map((d) => JSON.parse(d.body).type))).toEqual(
      new Set(["run.status_changed", "release_decision.updated"]),
    );
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("delivers everything to a receiver that was down for a while, once it is back: none lost, duplicates with the same webhook-id", async () => {
    const r = await receiver();
    const webhook = await register(r.url);
    await r.down();
    const { trace } = await runToEnd();
    await waitFor(
      async () =>
        (await client.get(`/v1/webhooks/${webhook.webhook_id}/deliveries?outcome=failed&limit=5`)).body.data.length > 0,
      "failed attempts",
    );
    const failed = (await client.get(`/v1/webhooks/${webhook.webhook_id}/deliveries?outcome=failed&limit=1`)).body
      .data[0];
    expect(failed).toMatchObject({
      response_status: null,
      error: expect.stringMatching(/ECONNREFUSED/),
      next_attempt_at: expect.any(String),
    });
    expect((await client.get(`/v1/webhooks/${webhook.webhook_id}`)).body.failing_since).not.toBeNull();
    await r.up();
    await waitFor(
      () => trace.every((e) => r.events().has(e.event_id)),
      "every event delivered after the receiver came back",
      { timeoutMs: 20_000 },
    );
    await waitFor(
      async () => (await client.get(`/v1/webhooks/${webhook.webhook_id}`)).body.failing_since === null,
      "healthy again",
    );
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("disables an endpoint that answers 410, and says why", async () => {
    const r = await receiver();
    r.answerWith({ status: 410 });
    const webhook = await register(r.url);
    await runToEnd();
    const disabled = await waitFor(async () => {
      const body = (await client.get(`/v1/webhooks/${webhook.webhook_id}`)).body;
      return body.enabled ? undefined : body;
    }, "disabled");
    expect(disabled.disabled_reason).toContain("410");
    // What was in flight when it was disabled lands; then nothing more.
    let settled = -1;
    await waitFor(async () => {
      const seen = r.received.length;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stable = seen === r.received.length && seen === settled;
      settled = seen;
      return stable;
    }, "the attempts in flight");
    const before = r.received.length;
    await runToEnd();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.received.length).toBe(before);
    // Enabled again by a request.
    const enabled = await client.patch(`/v1/webhooks/${webhook.webhook_id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("signs with both secrets while a rotation overlaps", async () => {
    const r = await receiver();
    const webhook = await register(r.url, { event_types: ["run.status_changed"] });
    const rotated = await client.post(`/v1/webhooks/${webhook.webhook_id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    await runToEnd();
    await waitFor(() => r.received.length >= 3, "deliveries");
    for (const delivery of r.received) {
      expect((delivery.headers["webhook-signature"] as string).split(" ")).toHaveLength(2);
      expect(verify(webhook.secret, delivery)).toBeDefined();
      expect(verify(rotated.body.secret, delivery)).toBeDefined();
    }
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("redelivers one delivery, and recovers every event since a time", async () => {
    const r = await receiver();
    const webhook = await register(r.url, { event_types: ["run.status_changed"] });
    const since = new Date().toISOString();
    await runToEnd();
    await waitFor(() => r.received.length >= 3, "deliveries");
    const last = await waitFor(
      async () => (await client.get(`/v1/webhooks/${webhook.webhook_id}/deliveries?limit=1`)).body.data[0],
      "an attempt recorded",
    );
    const again = await client.post(`/v1/webhooks/${webhook.webhook_id}/deliveries/${last.delivery_id}/redeliver`, {});
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ delivery_id: last.delivery_id, status: "pending" });
    await waitFor(
      () => r.received.filter((d) => d.headers["webhook-id"] === last.event_id).length === 2,
      "the redelivery, with the same webhook-id",
    );

    const count = r.received.length;
    const recovered = await client.post(`/v1/webhooks/${webhook.webhook_id}/recover`, { since });
    expect(recovered.status).toBe(202);
    expect(recovered.body.requeued).toBe(3);
    await waitFor(() => r.received.length === count + 3, "every event since then, again");
    expect((await client.post(`/v1/webhooks/${webhook.webhook_id}/deliveries/dlv_missing/redeliver`, {})).status).toBe(
      404,
    );
    await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
  });

  it("keeps delivering to the others while one receiver hangs", async () => {
    const hanging = await receiver();
    hanging.answerWith("hang");
    const healthy = await receiver();
    const stuck = await register(hanging.url);
    const fine = await register(healthy.url);
    const { trace } = await runToEnd();
    await waitFor(() => trace.every((e) => healthy.events().has(e.event_id)), "the healthy receiver's deliveries");
    // All of it while the hanging receiver still holds its attempts: not one of them has ended (15 s each).
    expect((await client.get(`/v1/webhooks/${stuck.webhook_id}/deliveries`)).body.data).toEqual([]);
    expect(hanging.received.length).toBeGreaterThan(0);
    expect(hanging.received.length).toBeLessThanOrEqual(16); // at most its in-flight share
    await client.delete(`/v1/webhooks/${stuck.webhook_id}`);
    await client.delete(`/v1/webhooks/${fine.webhook_id}`);
  });

  it("refuses a url on a metadata or link-local address, and a bad body, changing nothing", async () => {
    const before = (await t.service.store.countRows()).webhooks;
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://metadata.google.internal/hooks",
      "http://[fe80::1]/hooks",
    ]) {
      const refused = await client.post("/v1/webhooks", { url });
      expect([url, refused.status]).toEqual([url, 400]);
      expect(refused.body.error.details[0].path).toBe("body.url");
    }
    expect((await client.post("/v1/webhooks", { url: "ftp://example.com/x" })).status).toBe(400);
    expect((await client.post("/v1/webhooks", { url: "https://example.com/x", event_types: ["no.such"] })).status).toBe(
      400,
    );
    expect((await t.service.store.countRows()).webhooks).toBe(before);
    // The policy applies at delivery too: a url the egress policy refuses is never called.
    const [row] = (await t.service.store.write([
      "createWebhook",
      {
        webhook_id: "whk_metadata",
        project_id: p.projectId,
        url: "http://169.254.169.254/hooks",
        event_types: ["run.status_changed"],
        description: null,
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      },
      new Date().toISOString(),
    ])) as [unknown];
    expect(row).toBeDefined();
    await runToEnd();
    const attempt = await waitFor(
      async () => (await t.admin.get("/v1/webhooks/whk_metadata/deliveries?limit=1")).body.data[0],
      "an attempt",
    );
    expect(attempt).toMatchObject({ response_status: null, error: expect.stringMatching(/Egress refused/) });
    await t.admin.delete("/v1/webhooks/whk_metadata");
  });

  it("is consumed as the README shows: verified, validated, kept once per event_id, processed in the background", async () => {
    const processed: string[] = [];
    let consumer: ReturnType<typeof makeWebhookConsumer> | undefined;
    // Until the consumer has its secret it answers 503: those deliveries are tried again.
    const server = createServer((req, res) =>
      consumer ? void consumer.handle(req, res) : void res.writeHead(503).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const webhook = await register(url, { event_types: ["run.status_changed", "release_decision.updated"] });
      consumer = makeWebhookConsumer({
        secret: webhook.secret,
        dbPath: join(mkdtempSync(join(tmpdir(), "assure-consumer-")), "events.db"),
        process: async (event) => void processed.push(event.event_id),
      });
      const { run_id, trace } = await runToEnd();
      await client.post("/v1/release-decisions", { subject: { run_ids: [run_id] } });
      const moves = trace.filter((e) => e.type === "run.status_changed").map((e) => e.event_id);
      await waitFor(
        () => moves.every((id) => processed.includes(id)) && processed.length === moves.length + 1,
        "every event processed",
      );
      // A delivery sent again is kept and processed once.
      // (An attempt is recorded once its answer is in.)
      const last = await waitFor(
        async () =>
          (await client.get(`/v1/webhooks/${webhook.webhook_id}/deliveries?outcome=delivered&limit=1`)).body.data[0],
        "a delivered attempt recorded",
      );
      await client.post(`/v1/webhooks/${webhook.webhook_id}/deliveries/${last.delivery_id}/redeliver`, {});
      await waitFor(
        async () =>
          (
            await client.get(
              `/v1/webhooks/${webhook.webhook_id}/deliveries?event_id=${last.event_id}&outcome=delivered`,
            )
          ).body.data.length === 2,
        "the redelivery",
      );
      expect(processed.filter((id) => id === last.event_id)).toHaveLength(1);
      expect(consumer.db.prepare("SELECT COUNT(*) FROM received").pluck().get()).toBe(moves.length + 1);
      // A forged delivery is refused.
      const forged = await fetch(url, {
        method: "POST",
        headers: {
          "webhook-id": "msg_1",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAA",
        },
        body: "{}",
      });
      expect(forged.status).toBe(401);
      await client.delete(`/v1/webhooks/${webhook.webhook_id}`);
    } finally {
      server.close();
      consumer?.close();
    }
  });
});
