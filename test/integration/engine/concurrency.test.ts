import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import {
  expectConversationsInOrder,
  expectEachHeldOnce,
  expectGapFree,
  readConversations,
  readTrace,
  startRun,
  waitForRun,
} from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** 2 scenarios × `repeat`: conversations of one or two turns against the example agent. */
const specOf = (defaults: { repeat: number; concurrency?: number; run_timeout_ms?: number }) =>
  deterministicSpecYaml(defaults);

async function addSpec(p: SeededProject, yaml: string): Promise<string> {
  const response = await p.client.call("POST", "/v1/test-specs", {
    body: yaml.replace("name: refund-agent-deterministic", `name: spec-${Math.random().toString(36).slice(2, 8)}`),
    contentType: "application/yaml",
  });
  expect([200, 201]).toContain(response.status);
  return response.body.test_spec_id as string;
}

/** What an evaluation says, without what differs between two runs of it (ids, times, trace positions). */
async function evaluationsOf(p: SeededProject, runId: string) {
  const evaluations = (await p.client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as Record<
    string,
    unknown
  >[];
  return evaluations.map(({ metric_id, kind, scope, status, score, threshold, spec_path, scenario_id, samples }) => ({
    metric_id,
    kind,
    scope,
    status,
    score,
    threshold,
    spec_path,
    scenario_id,
    samples,
  }));
}

/** A service and an example agent for the tests of a `describe`, started before them and closed after. */
function serviceWithAgent(env: Record<string, string>, agentOptions: Parameters<typeof startExampleAgent>[0]) {
  const setup = {} as { t: TestService; agent: ExampleAgent };
  beforeAll(async () => {
    setup.t = await startTestService({ env });
    setup.agent = await startExampleAgent(agentOptions);
  });
  afterAll(async () => {
    await setup.t.close();
    await setup.agent.close();
  });
  return setup;
}

describe("conversations held concurrently within a run", () => {
  const setup = serviceWithAgent({ ASSURE_WORKERS: "4", ASSURE_MAX_CONVERSATIONS: "64" }, { latencyMs: 40 });
  let t: TestService;
  let agent: ExampleAgent;
  beforeAll(() => void ({ t, agent } = setup));
  afterEach(() => agent.resetPeak());

  it("holds up to the spec's concurrency at once, never more, with a gap-free trace and each conversation in order", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: specOf({ repeat: 12, concurrency: 5 }) });
    agent.resetPeak();
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    expect(agent.peakInFlight).toBe(5);
    const trace = await readTrace(p.client, run_id);
    expectGapFree(trace);
    expectConversationsInOrder(trace);
    expectEachHeldOnce(await readConversations(p.client, run_id), 24);
  });

  it("keeps every run against one environment within its endpoint.max_concurrency", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: specOf({ repeat: 10, concurrency: 8 }) });
    expect(
      (await p.client.patch(`/v1/environments/${p.environmentId}`, { endpoint: { max_concurrency: 3 } })).body.endpoint,
    ).toMatchObject({ max_concurrency: 3 });
    agent.resetPeak();
    const runs = await Promise.all(
      [1, 2, 3].map(() => startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId })),
    );
    for (const { run_id } of runs) {
      expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    }
    expect(agent.peakInFlight).toBe(3);
  });

  it("judges a deterministic spec the same whether its conversations ran one at a time or sixteen at once", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: specOf({ repeat: 8, concurrency: 1 }) });
    const concurrentSpec = await addSpec(p, specOf({ repeat: 8, concurrency: 16 }));
    const serial = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await waitForRun(p.client, serial.run_id);
    const serialPeak = agent.peakInFlight;
    agent.resetPeak();
    const concurrent = await startRun(p.client, { test_spec_id: concurrentSpec, environment_id: p.environmentId });
    await waitForRun(p.client, concurrent.run_id);
    expect(serialPeak).toBe(1);
    expect(agent.peakInFlight).toBe(16);

    const [serialEvaluations, concurrentEvaluations] = [
      await evaluationsOf(p, serial.run_id),
      await evaluationsOf(p, concurrent.run_id),
    ];
    expect(serialEvaluations.length).toBeGreaterThan(16);
    expect(concurrentEvaluations).toEqual(serialEvaluations);
    const gates = async (runId: string) =>
      (await p.client.get(`/v1/runs/${runId}/evidence`)).body.gates.map(
        ({ gate_id, status, reason }: Record<string, unknown>) => ({ gate_id, status, reason }),
      );
    expect(await gates(concurrent.run_id)).toEqual(await gates(serial.run_id));
    // The repeats keep their numbers and order: conversation ids count up in the order they were planned.
    const order = (conversations: { scenario_id: string; repeat_index: number }[]) =>
      conversations.map((c) => `${c.scenario_id}#${c.repeat_index}`);
    expect(order(await readConversations(p.client, concurrent.run_id)).sort()).toEqual(
      order(await readConversations(p.client, serial.run_id)).sort(),
    );
  });
});

describe("the process-wide cap on conversations", () => {
  const setup = serviceWithAgent({ ASSURE_WORKERS: "4", ASSURE_MAX_CONVERSATIONS: "6" }, { latencyMs: 40 });
  let t: TestService;
  let agent: ExampleAgent;
  beforeAll(() => void ({ t, agent } = setup));

  it("never holds more than ASSURE_MAX_CONVERSATIONS at once across runs and environments", async () => {
    const first = await seedProject(t, agent.baseUrl, { specYaml: specOf({ repeat: 10, concurrency: 8 }) });
    const second = await seedProject(t, agent.baseUrl, { specYaml: specOf({ repeat: 10, concurrency: 8 }) });
    agent.resetPeak();
    const runs = await Promise.all(
      [first, second, first].map(async (p) => ({
        p,
        ...(await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId })),
      })),
    );
    for (const { p, run_id } of runs) {
      expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    }
    expect(agent.peakInFlight).toBe(6);
  });
});

describe("an agent that asks to slow down", () => {
  const setup = serviceWithAgent({ ASSURE_WORKERS: "2" }, { latencyMs: 30, acceptInFlight: 2 });
  let t: TestService;
  let agent: ExampleAgent;
  beforeAll(() => void ({ t, agent } = setup));

  it("waits out 429 + Retry-After (recorded in the trace, not a failure) and lowers its concurrency to what the agent takes", async () => {
    const p = await seedProject(t, agent.baseUrl, {
      model: "refund-agent+rate-limited",
      specYaml: specOf({ repeat: 10, concurrency: 16 }),
    });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    expect(await waitForRun(p.client, run_id, 60_000)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    const trace = await readTrace(p.client, run_id);
    expectGapFree(trace);
    const throttled = trace.filter((e) => e.type === "agent.throttled");
    expect(throttled.length).toBeGreaterThan(0);
    expect(throttled[0]!.data).toMatchObject({
      http_status: 429,
      retry_after_ms: 1000,
      turn: expect.any(Number),
      step: expect.any(Number),
    });
    expect(trace.some((e) => e.type === "agent.call_failed" || e.type === "conversation.failed")).toBe(false);
    // 16 asked for at first; halved on 429s until the agent took them all: far fewer 429s than calls.
    expect(agent.throttled).toBeLessThan(agent.requests / 2);
    expectEachHeldOnce(await readConversations(p.client, run_id), 20);
  });

  it("ends the run as a timeout when the wait asked for would pass the run's deadline", async () => {
    const p = await seedProject(t, agent.baseUrl, {
      model: "refund-agent+rate-limited",
      specYaml: specOf({ repeat: 1, concurrency: 1, run_timeout_ms: 1000 }),
    });
    const blocked = await startExampleAgent({ acceptInFlight: 0 }); // every call beyond none in flight: always 429
    try {
      expect(
        (
          await p.client.patch(`/v1/environments/${p.environmentId}`, {
            endpoint: { base_url: blocked.baseUrl, headers: { authorization: "Bearer agent-secret" } },
          })
        ).status,
      ).toBe(200);
      const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      const run = await waitForRun(p.client, run_id);
      expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "timeout" } });
      expect(run.failure.message).toMatch(/Retry-After.*deadline/);
      const conversations = await readConversations(p.client, run_id);
      expect(conversations.map((c) => c.status)).toEqual(["failed"]);
    } finally {
      await blocked.close();
    }
  });
});
