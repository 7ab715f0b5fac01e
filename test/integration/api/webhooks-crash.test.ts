import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { makeResponseValidator, type OpenApiDocument } from "../../helpers/openapi.js";
import { readTrace, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

describe("webhook deliveries across a crash", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let receiver: WebhookReceiver;
  let service: ChildService | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-webhook-crash-"));
    env = {
      ASSURE_DB: join(dir, "assure.db"),
      ASSURE_WORKERS: "2",
      ASSURE_WEBHOOK_RETRY_SCALE: "0.001",
      ASSURE_WORKER_LEASE_MS: "2000",
    };
    agent = await startExampleAgent();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await service?.kill();
    await receiver.close();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("delivers, after a kill -9 and a restart, every event committed but not yet delivered", async () => {
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    service = await spawnService(env);
    const openapi = (await (await fetch(`${service.baseUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    const client = () => makeApiClient(service!.baseUrl, makeResponseValidator(openapi), token);
    const project = (await client().post("/v1/projects", { name: "crash" })).body.project_id;
    const agentId = (await client().post("/v1/agents", { project_id: project, name: "refund-agent", version: "1" }))
      .body.agent_id;
    const environment = (
      await client().post("/v1/environments", {
        project_id: project,
        name: "staging",
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
      })
    ).body.environment_id;
    const spec = (
      await client().call("POST", `/v1/test-specs?project_id=${project}`, {
        body: deterministicSpecYaml({ repeat: 2 }),
        contentType: "application/yaml",
      })
    ).body.test_spec_id;
    expect((await client().post("/v1/webhooks", { project_id: project, url: receiver.url })).status).toBe(201);

    // The receiver is down: every delivery is committed, none delivered.
    await receiver.down();
    const run = (
      await client().post(
        "/v1/runs",
        { test_spec_id: spec, environment_id: environment },
        { headers: { "idempotency-key": "crash-run" } },
      )
    ).body;
    await waitForRun(client(), run.run_id);
    const trace = await readTrace(client(), run.run_id);
    expect(receiver.received).toHaveLength(0);

    await service.kill();
    await receiver.up();
    service = await spawnService(env);
    await waitFor(
      () => trace.every((e) => receiver.events().has(e.event_id)),
      "every event delivered after the restart",
      { timeoutMs: 30_000 },
    );
    // None corrupted: each body is the trace's own entry.
    const served = (await client().get(`/v1/runs/${run.run_id}/trace?limit=200`)).body.data as { event_id: string }[];
    for (const entry of served) expect(JSON.parse(receiver.events().get(entry.event_id)!)).toEqual(entry);
  });

  it("delivers, after a kill -9 in the middle of attempts, what was in flight once its lease lapses", async () => {
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    const openapi = (await (await fetch(`${service!.baseUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    const client = () => makeApiClient(service!.baseUrl, makeResponseValidator(openapi), token);
    const project = (await client().post("/v1/projects", { name: "crash-in-flight" })).body.project_id;
    const agentId = (await client().post("/v1/agents", { project_id: project, name: "refund-agent", version: "1" }))
      .body.agent_id;
    const environment = (
      await client().post("/v1/environments", {
        project_id: project,
        name: "staging",
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
      })
    ).body.environment_id;
    const spec = (
      await client().call("POST", `/v1/test-specs?project_id=${project}`, {
        body: deterministicSpecYaml({ repeat: 1 }),
        contentType: "application/yaml",
      })
    ).body.test_spec_id;
    const hanging = await startWebhookReceiver();
    try {
      // The receiver takes the requests and never answers: the attempts are in flight, under their lease, when the service dies.
      hanging.answerWith("hang");
      const webhook = (
        await client().post("/v1/webhooks", {
          project_id: project,
          url: hanging.url,
          event_types: ["run.status_changed"],
        })
      ).body;
      const run = (
        await client().post(
          "/v1/runs",
          { test_spec_id: spec, environment_id: environment },
          { headers: { "idempotency-key": "in-flight-run" } },
        )
      ).body;
      await waitForRun(client(), run.run_id);
      const moves = (await readTrace(client(), run.run_id)).filter((e) => e.type === "run.status_changed");
      await waitFor(() => moves.every((e) => hanging.events().has(e.event_id)), "every move in flight");

      await service!.kill();
      hanging.answerWith({ status: 204 });
      const answered = hanging.received.length;
      service = await spawnService(env);
      // Taken up again once the 2 s lease lapses: each move arrives again, with its webhook-id, and is answered.
      await waitFor(
        () => moves.every((e) => hanging.received.slice(answered).some((r) => r.headers["webhook-id"] === e.event_id)),
        "every move delivered again after the restart",
        { timeoutMs: 20_000 },
      );
      // Recorded as delivered, each once, on the attempt that was answered.
      const delivered = await waitFor(async () => {
        const data = (await client().get(`/v1/webhooks/${webhook.webhook_id}/deliveries?outcome=delivered`)).body
          .data as { event_id: string }[];
        return data.length >= moves.length ? data : undefined;
      }, "the delivered attempts recorded");
      expect(new Set(delivered.map((a) => a.event_id))).toEqual(new Set(moves.map((e) => e.event_id)));
    } finally {
      await hanging.close();
    }
  });
});
