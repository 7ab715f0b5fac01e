import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readConversations, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** The deterministic example (2 scenarios × 4 repeats), one conversation at a time, trying a failed case again up to `retries` times. */
const retrying = (retries: number) =>
  deterministicSpecYaml({ repeat: 4, concurrency: 1 }).replace(
    /^defaults:\n/m,
    `defaults:\n  retry_failed: ${retries}\n`,
  );

describe("defaults.retry_failed: a failed case is tried again before it counts", () => {
  let t: TestService;
  let agent: ExampleAgent;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    agent = await startExampleAgent();
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  async function runWith(specYaml: string) {
    const p = await seedProject(t, agent.baseUrl, { specYaml });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    return { p, run, conversations: await readConversations(p.client, run_id) };
  }

  it("passes a case that failed once and passed on its next try; both tries stay in the evidence, the last one counts", async () => {
    agent.behave(["erratic"]); // every fourth conversation it starts gets the order id wrong
    const without = await runWith(retrying(0));
    expect(without.run).toMatchObject({ status: "COMPLETED", verdict: "FAIL" });

    agent.behave(["erratic"]);
    const { p, run, conversations } = await runWith(retrying(2));
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    // 8 planned, and the 4th and 8th conversation started erred: each tried once more.
    expect(conversations).toHaveLength(10);
    const again = conversations.filter((c) => c.retry === 1);
    expect(again).toHaveLength(2);
    for (const second of again) {
      const first = conversations.find(
        (c) => c.scenario_id === second.scenario_id && c.repeat_index === second.repeat_index && c.retry === 0,
      )!;
      expect(first).toMatchObject({ status: "completed", counted: false });
      expect(second).toMatchObject({ status: "completed", counted: true, attempt: 1 });
    }
    expect(conversations.filter((c) => c.counted)).toHaveLength(8);
    // The evaluations are of the counted tries only; the first tries are readable, with their trace.
    const evaluations = (await p.client.get(`/v1/runs/${run.run_id}/evaluations?limit=200`)).body.data as {
      conversation_id: string | null;
    }[];
    const counted = new Set(conversations.filter((c) => c.counted).map((c) => c.conversation_id));
    const cited = new Set(evaluations.flatMap((e) => e.conversation_id ?? []));
    expect([...cited].sort()).toEqual([...counted].sort());
    const first = conversations.find((c) => c.retry === 0 && !c.counted)!;
    const read = await p.client.get(`/v1/runs/${run.run_id}/conversations/${first.conversation_id}`);
    expect(read.status).toBe(200);
    expect(read.body.messages.length).toBeGreaterThan(0);
    const started = (await p.client.get(`/v1/runs/${run.run_id}/trace?limit=200`)).body.data.filter(
      (e: { type: string; data: { retry?: number } }) => e.type === "conversation.started" && e.data.retry === 1,
    );
    expect(started).toHaveLength(2);
  });

  it("counts the last try when every try fails: the case fails after retry_failed more tries", async () => {
    agent.behave(["wrong-arguments"]);
    const { run, conversations } = await runWith(retrying(2));
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "FAIL" });
    expect(conversations).toHaveLength(8 * 3);
    expect(conversations.filter((c) => c.counted).map((c) => c.retry)).toEqual(Array(8).fill(2));
  });

  it("tries nothing again when every case passes", async () => {
    agent.behave([]);
    const { run, conversations } = await runWith(retrying(3));
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    expect(conversations).toHaveLength(8);
    expect(conversations.every((c) => c.retry === 0 && c.counted)).toBe(true);
  });
});
