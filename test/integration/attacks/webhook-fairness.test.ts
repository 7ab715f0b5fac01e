import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

/** The adversarial review's finding 14 (issue: "The gate holds"): dead webhook endpoints taking every slot. */
describe("finding 14: dead webhook endpoints starve healthy ones", () => {
  let t: TestService;
  let healthy: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WEBHOOK_RETRY_SCALE: "0.001" } });
    healthy = await startWebhookReceiver();
  });
  afterAll(async () => {
    await healthy.close();
    await t.close();
  });

  it("keeps delivering to a healthy endpoint while 80 endpoints at hosts that do not resolve keep failing beside it", async () => {
    const project = (await t.admin.post("/v1/projects", { name: "many-hooks" })).body.project_id;
    // The dead ones first: claims in the order endpoints were made would always start with them.
    for (let i = 0; i < 80; i++) {
      expect(
        (
          await t.admin.post("/v1/webhooks", {
            project_id: project,
            url: `https://dead-${i}.assure-tests.invalid/hook`,
            event_types: ["release_decision.updated"],
          })
        ).status,
      ).toBe(201);
    }
    await t.admin.post("/v1/webhooks", {
      project_id: project,
      url: healthy.url,
      event_types: ["release_decision.updated"],
    });
    // Each decision made is an event for every endpoint.
    const decide = (i: number) =>
      t.admin.post("/v1/release-decisions", {
        project_id: project,
        subject: { repository: "acme/hooks", commit_sha: i.toString(16).padStart(40, "0") },
        plan: [],
      });
    const failing = t.service.store.sql
      .prepare("SELECT COUNT(*) AS n FROM webhooks WHERE failing_since IS NOT NULL")
      .pluck();
    await decide(0);
    await waitFor(
      async () => healthy.received.length === 1 && (await failing.get()) === 80,
      "every endpoint tried once",
      {
        timeoutMs: 30_000,
      },
    );

    // With the dead ones known to be failing, the healthy one's deliveries go out however many of theirs are due.
    for (let i = 1; i <= 20; i++) await decide(i);
    await waitFor(() => healthy.received.length === 21, "the healthy endpoint's 20 more deliveries", {
      timeoutMs: 15_000,
    });
    const dead = await t.service.store.sql
      .prepare(
        "SELECT COUNT(*) AS n FROM webhook_deliveries d JOIN webhooks w USING (webhook_id) WHERE w.failing_since IS NOT NULL AND d.status = 'pending'",
      )
      .pluck()
      .get<number>();
    expect(dead).toBeGreaterThan(80 * 20 * 0.9);
  });
});
