import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import {
  expectEachHeldOnce,
  expectGapFree,
  readConversations,
  readTrace,
  startRun,
  waitForRun,
} from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

describe("stopping the engine with a run in hand", () => {
  let t: TestService;
  let agent: ExampleAgent;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1" } });
    agent = await startExampleAgent({ slowMs: 100 });
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  it("hands the run back without counting an attempt, and it resumes to a verdict", async () => {
    const p = await seedProject(t, agent.baseUrl, {
      model: "refund-agent+slow",
      specYaml: deterministicSpecYaml({ repeat: 2 }),
    });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await waitFor(
      async () => (await readTrace(p.client, run_id)).filter((e) => e.type === "message.received").length >= 2,
      "the run to get under way",
    );
    await t.service.worker.stop(0); // no grace: the call in flight is abandoned
    expect(t.service.worker.running).toBe(0);
    expect((await p.client.get(`/v1/runs/${run_id}`)).body.status).toBe("RUNNING");

    t.service.worker.start();
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    const trace = await readTrace(p.client, run_id);
    expectGapFree(trace);
    const resumed = trace.find((e) => e.type === "run.resumed")!;
    const { interrupted } = expectEachHeldOnce(await readConversations(p.client, run_id), 4);
    expect(interrupted).toBeGreaterThanOrEqual(1);
    expect(resumed.data).toMatchObject({ attempt: 1, interrupted_conversations: interrupted });
  });
});
