import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { FakeClock } from "../../helpers/fake-clock.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

describe("an endpoint that keeps failing", () => {
  const clock = new FakeClock(Date.parse("2026-11-23T09:00:00Z"));
  let t: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestService({ clock });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it("is disabled once every attempt has failed for five days, and says so", async () => {
    receiver.answerWith({ status: 500 });
    const project = (await t.admin.post("/v1/projects", { name: "failing" })).body.project_id;
    const webhook = (
      await t.admin.post("/v1/webhooks", {
        project_id: project,
        url: receiver.url,
        event_types: ["release_decision.updated"],
      })
    ).body;
    // A decision's update is an event: a commit with nothing planned is decided BLOCKED at once.
    await t.admin.post("/v1/release-decisions", {
      project_id: project,
      subject: { repository: "acme/x", commit_sha: "c".repeat(40) },
      plan: [],
    });
    await waitFor(() => receiver.received.length === 1, "the first attempt");
    // The attempt is recorded once its answer is in.
    const failing = await waitFor(async () => {
      const body = (await t.admin.get(`/v1/webhooks/${webhook.webhook_id}`)).body;
      return body.failing_since ? body : undefined;
    }, "the attempt recorded");
    expect(failing).toMatchObject({ enabled: true, failing_since: "2026-11-23T09:00:00.000Z" });

    // Four days on, the next attempt fails too: still enabled.
    clock.advance(4 * 86_400_000);
    await waitFor(() => receiver.received.length === 2, "the second attempt");
    await waitFor(
      async () => (await t.admin.get(`/v1/webhooks/${webhook.webhook_id}/deliveries`)).body.data.length === 2,
      "the second attempt recorded",
    );
    expect((await t.admin.get(`/v1/webhooks/${webhook.webhook_id}`)).body.enabled).toBe(true);
    // Past five days: disabled, with the reason.
    clock.advance(86_400_000 + 60_000);
    const disabled = await waitFor(async () => {
      const body = (await t.admin.get(`/v1/webhooks/${webhook.webhook_id}`)).body;
      return body.enabled ? undefined : body;
    }, "disabled");
    expect(disabled.disabled_reason).toBe("every attempt failed since 2026-11-23T09:00:00.000Z: disabled after 5 days");
    const attempts = (await t.admin.get(`/v1/webhooks/${webhook.webhook_id}/deliveries`)).body.data;
    expect(attempts.map((a: { response_status: number }) => a.response_status)).toEqual([500, 500, 500]);
  });
});
