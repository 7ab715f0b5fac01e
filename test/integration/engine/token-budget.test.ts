import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readConversations, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** The deterministic example (2 scenarios × `repeat`) with a token budget, held one conversation at a time. */
const budgeted = (maxTokens: number, repeat = 3) => deterministicSpecYaml({ repeat, concurrency: 1 }).replace(/^defaults:\n/m, `defaults:\n  budget:\n    max_tokens: ${maxTokens}\n`);

describe("a run's token budget", () => {
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

  it("records the tokens each answer reports, and passes the budget gate within it", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: budgeted(1_000_000) });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    const answers = (await readTrace(p.client, run_id)).filter((e) => e.type === "message.received");
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer.data.usage).toEqual({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    const used = answers.reduce((sum, answer) => sum + answer.data.usage.total_tokens, 0);
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    expect(evidence.gates.find((g: { id: string }) => g.id === "budget")).toMatchObject({ status: "passed", reason: `the agent used ${used} of 1000000 tokens over ${answers.length} answer(s)` });
    const input = answers.reduce((sum, answer) => sum + answer.data.usage.input_tokens, 0);
    expect(evidence.usage).toEqual({ answers: answers.length, answers_without_usage: 0, input_tokens: input, output_tokens: used - input, total_tokens: used });
  });

  it("stops starting conversations once the budget is reached, and fails the run with budget_exceeded", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: budgeted(150) });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "budget_exceeded" } });
    expect(run.failure.message).toMatch(/^The agent used \d+ tokens, reaching the run's budget of 150 \(defaults\.budget\.max_tokens\): \d+ conversation\(s\) were not held$/);
    const held = await readConversations(p.client, run_id);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(6);
    expect(held.every((c) => c.status === "completed")).toBe(true);
    // The evidence of a failed run still says what the agent used.
    const usage = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body.usage;
    expect(usage.total_tokens).toBeGreaterThanOrEqual(150);
  });

  it("is inconclusive when the agent reports no usage: unknown, never zero", async () => {
    const p = await seedProject(t, agent.baseUrl, { model: "refund-agent+no-usage", specYaml: budgeted(100, 1) });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" });
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    expect(evidence.gates.find((g: { id: string }) => g.id === "budget")).toMatchObject({
      status: "inconclusive",
      reason: expect.stringMatching(/^\d+ of \d+ answer\(s\) reported no token usage: the budget of 100 tokens cannot be checked/),
    });
    expect(evidence.gates.find((g: { id: string }) => g.id === "DET")).toMatchObject({ status: "passed" });
    expect(evidence.usage).toMatchObject({ answers_without_usage: evidence.usage.answers, total_tokens: 0 });
    expect(evidence.usage.answers).toBeGreaterThan(0);
  });

  it("refuses a spec whose own gate is named budget beside a budget", async () => {
    const p = await seedProject(t, agent.baseUrl);
    const yaml = budgeted(100).replace("id: DET", "id: budget");
    const response = await p.client.call("POST", "/v1/test-specs", { body: yaml, contentType: "application/yaml" });
    expect(response.status).toBe(400);
    expect(response.body.error.details[0].message).toMatch(/the gate id 'budget' is the one defaults.budget adds/);
  });
});
