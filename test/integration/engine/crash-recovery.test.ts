import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { expectAllRefsResolve, expectGapFree, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";

describe("a run survives kill -9 of the service", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let service: ChildService | undefined;

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

  it("is resumed after a restart and ends terminal with a gap-free trace", async () => {
    const token = runCli(["keys", "create", "--admin"], env).json().token;
    service = await spawnService(env);
    let client = makeApiClient(service.baseUrl, undefined, token);
    const project = (await client.post("/v1/projects", { name: "crash" })).body.project_id;
    const agentId = (await client.post("/v1/agents", { project_id: project, name: "refund-agent", version: "3" })).body.agent_id;
    const environmentId = (
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
    const { run_id } = await startRun(client, { test_spec_id: spec.body.test_spec_id, environment_id: environmentId });

    // Wait until the run is well under way, then kill the service without warning.
    for (let i = 0; ; i++) {
      const trace = (await client.get(`/v1/runs/${run_id}/trace?limit=200`)).body.data;
      if (trace.filter((e: { type: string }) => e.type === "conversation.completed").length >= 1 && trace.at(-1).type !== "conversation.completed") break;
      if (i > 400) throw new Error("the run did not get under way");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
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

  it("finishes or hands back runs in hand on SIGTERM", async () => {
    service ??= await spawnService(env);
    expect(await service.stop()).toBe(0);
    service = undefined;
  });
});
