import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { expectAllRefsResolve, expectGapFree, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";
import { systemClock } from "../../../server/clock.js";
import { openStore } from "../../../server/store/index.js";

describe("a run and the service stopping", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let service: ChildService | undefined;
  let token: string;
  let environmentId: string;
  let testSpecId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-crash-"));
    env = { ASSURE_DB: join(dir, "assure.db"), ASSURE_WORKERS: "2", ASSURE_WORKER_LEASE_MS: "1000" };
    agent = await startExampleAgent({ slowMs: 120 });
  });
  afterAll(async () => {
    await service?.kill();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("survives kill -9: it is resumed after a restart and ends terminal with a gap-free trace", async () => {
    token = runCli(["keys", "create", "--admin"], env).json().token;
    service = await spawnService(env);
    let client = makeApiClient(service.baseUrl, undefined, token);
    const project = (await client.post("/v1/projects", { name: "crash" })).body.project_id;
    const agentId = (await client.post("/v1/agents", { project_id: project, name: "refund-agent", version: "3" })).body.agent_id;
    environmentId = (
      await client.post("/v1/environments", {
        project_id: project,
        name: "staging",
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent+slow" },
      })
    ).body.environment_id;
    const spec = await client.call("POST", `/v1/test-specs?project_id=${project}`, {
      body: deterministicSpecYaml({ repeat: 2 }),
      contentType: "application/yaml",
    });
    testSpecId = spec.body.test_spec_id;
    const { run_id } = await startRun(client, { test_spec_id: testSpecId, environment_id: environmentId });

    // Wait until the run is well under way (one conversation done, the next one started), then kill the service without warning.
    await waitFor(async () => {
      const trace = (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data;
      return trace.filter((e: { type: string }) => e.type === "conversation.completed").length >= 1 && trace.at(-1).type !== "conversation.completed";
    }, "the run to get under way");
    await service.kill();
    const beforeRestart = agent.requests;

    service = await spawnService(env);
    client = makeApiClient(service.baseUrl, undefined, token);
    const run = await waitForRun(client, run_id, 60_000);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    expect(agent.requests).toBeGreaterThan(beforeRestart);

    const trace = await readTrace(client, run_id);
    expectGapFree(trace);
    expect(trace.some((e) => e.type === "run.resumed")).toBe(true);
    const conversations = (await client.get(`/v1/runs/${run_id}/conversations?limit=200`)).body.data;
    // Every planned conversation completed once; the one cut off is kept, marked interrupted.
    expect(conversations.filter((c: { status: string }) => c.status === "completed")).toHaveLength(4);
    expect(conversations.filter((c: { status: string }) => c.status === "interrupted")).toHaveLength(1);
    expect(conversations.every((c: { status: string }) => c.status !== "running")).toBe(true);
    await expectAllRefsResolve(client, run_id);
  });

  it("finishes the runs in hand on SIGTERM before it exits", async () => {
    service ??= await spawnService(env);
    const client = makeApiClient(service.baseUrl, undefined, token);
    const { run_id } = await startRun(client, { test_spec_id: testSpecId, environment_id: environmentId });
    await waitFor(async () => (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data.some((e: { type: string }) => e.type === "message.received"), "the run to be in hand");
    expect((await client.get(`/v1/runs/${run_id}`)).body.status).toBe("RUNNING");

    expect(await service.stop()).toBe(0);
    service = undefined;
    const store = openStore(env.ASSURE_DB!, { clock: systemClock });
    try {
      expect(store.getRun(run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      expect(store.db.prepare("SELECT COUNT(*) FROM jobs WHERE state = 'running'").pluck().get()).toBe(0); // no lease left held
    } finally {
      store.close();
    }
  });
});
