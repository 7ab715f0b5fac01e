import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readConversations, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** The deterministic example (2 scenarios × `repeat`) with a token budget, held one conversation at a time. */
const budgeted = (maxTokens: number, repeat = 3) =>
  deterministicSpecYaml({ repeat, concurrency: 1 }).replace(
    /^defaults:\n/m,
    `defaults:\n  budget:\n    max_tokens: ${maxTokens}\n`,
  );

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
    for (const answer of answers) {
      expect(answer.data.usage).toEqual({
        input_tokens: expect.any(Number),
        output_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      });
    }
    const used = answers.reduce((sum, answer) => sum + answer.data.usage.total_tokens, 0);
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    expect(evidence.gates.find((g: { id: string }) => g.id === "budget")).toMatchObject({
      status: "passed",
      reason: `the agent used ${used} of 1000000 tokens over ${answers.length} answer(s)`,
    });
    const input = answers.reduce((sum, answer) => sum + answer.data.usage.input_tokens, 0);
    // The 95th percentile by nearest rank: the ceil(0.95 n)-th smallest latency.
    const latencies = answers.map((answer) => answer.data.latency_ms as number).sort((a, b) => a - b);
    const totals = {
      answers: answers.length,
      answers_without_usage: 0,
      input_tokens: input,
      output_tokens: used - input,
      total_tokens: used,
    };
    expect(evidence.usage).toEqual(totals);
    expect(evidence.usage_detail).toEqual({
      by_model: { "refund-agent": { ...totals, answers_without_split: 0 } },
      cost_usd: null,
      cost_unknown: `no price for the model 'refund-agent' (the environment's endpoint.pricing, or "*")`,
      latency_ms_p95: latencies[Math.ceil(0.95 * latencies.length) - 1],
      judge: { answers: 0, answers_without_usage: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 }, // nothing judged by an LLM
    });
    for (const answer of answers) expect(answer.data.model).toBe("refund-agent");
  });

  it("stops starting conversations once the budget is reached, and fails the run with budget_exceeded", async () => {
    const p = await seedProject(t, agent.baseUrl, { specYaml: budgeted(150) });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "budget_exceeded" } });
    expect(run.failure.message).toMatch(
      /^The agent used \d+ tokens, reaching the run's budget of 150 \(defaults\.budget\.max_tokens\): \d+ conversation\(s\) were not held$/,
    );
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
      reason: expect.stringMatching(
        /^\d+ of \d+ answer\(s\) reported no token usage: the budget of 100 tokens cannot be checked/,
      ),
    });
    expect(evidence.gates.find((g: { id: string }) => g.id === "DET")).toMatchObject({ status: "passed" });
    expect(evidence.usage).toMatchObject({ answers_without_usage: evidence.usage.answers, total_tokens: 0 });
    expect(evidence.usage.answers).toBeGreaterThan(0);
  });

  it("refuses a spec whose own gate is named budget beside a budget", async () => {
    const p = await seedProject(t, agent.baseUrl);
    const yaml = budgeted(100).replace("id: DET", "id: budget");
    const response = await p.client.call("POST", "/v1/test-specs", { body: yaml, contentType: "application/yaml" });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe("SPEC_INCONSISTENT");
    expect(response.body.error.details[0].message).toMatch(/the gate id 'budget' is the one defaults.budget adds/);
  });

  describe("what the answers cost, at the environment's prices", () => {
    const PRICES = { "refund-agent": { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 } };
    const costed = (budget: string, repeat = 3) =>
      deterministicSpecYaml({ repeat, concurrency: 1 }).replace(/^defaults:\n/m, `defaults:\n  budget:\n${budget}`);
    async function pricedProject(specYaml: string, pricing: Record<string, unknown> = PRICES) {
      const p = await seedProject(t, agent.baseUrl, { specYaml });
      const patched = await p.client.patch(`/v1/environments/${p.environmentId}`, { endpoint: { pricing } });
      expect(patched.status).toBe(200);
      expect(patched.body.endpoint.pricing).toEqual(pricing);
      return p;
    }

    it("works out the cost from each model's input and output tokens, and keeps the prices the run started with", async () => {
      const p = await pricedProject(costed("    max_cost_usd: 10\n"));
      const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      expect(await waitForRun(p.client, run_id)).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const { usage, usage_detail, gates } = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
      const expected = Math.round(((usage.input_tokens * 3 + usage.output_tokens * 15) / 1e6) * 1e6) / 1e6;
      expect(usage_detail).toMatchObject({ cost_usd: expected, cost_unknown: null });
      expect(expected).toBeGreaterThan(0);
      expect(gates.find((g: { id: string }) => g.id === "budget")).toMatchObject({
        status: "passed",
        title: "Budget",
        reason: `the agent's answers cost $${expected} of $10 over ${usage.answers} answer(s)`,
      });
      // New prices apply to new runs; this one keeps what it cost.
      await p.client.patch(`/v1/environments/${p.environmentId}`, {
        endpoint: { pricing: { "*": { input_usd_per_million_tokens: 1000, output_usd_per_million_tokens: 1000 } } },
      });
      expect((await p.client.get(`/v1/runs/${run_id}/evidence`)).body.usage_detail.cost_usd).toBe(expected);
    });

    it("stops once the cost budget is reached, and fails the run with budget_exceeded", async () => {
      const p = await pricedProject(costed("    max_cost_usd: 0.001\n"), {
        "*": { input_usd_per_million_tokens: 2, output_usd_per_million_tokens: 8 },
      });
      const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      const run = await waitForRun(p.client, run_id);
      expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "budget_exceeded" } });
      expect(run.failure.message).toMatch(
        /^The agent's answers cost \$[\d.]+, reaching the run's budget of \$0\.001 \(defaults\.budget\.max_cost_usd\): \d+ conversation\(s\) were not held$/,
      );
      expect((await p.client.get(`/v1/runs/${run_id}/evidence`)).body.usage_detail.cost_usd).toBeGreaterThanOrEqual(
        0.001,
      );
    });

    it("is inconclusive when a model has no price, and when an answer reports no usage: unknown, never zero", async () => {
      const unpriced = await pricedProject(costed("    max_cost_usd: 10\n", 1), {
        "another-model": PRICES["refund-agent"],
      });
      const first = await startRun(unpriced.client, {
        test_spec_id: unpriced.testSpecId,
        environment_id: unpriced.environmentId,
      });
      expect(await waitForRun(unpriced.client, first.run_id)).toMatchObject({ status: "INCONCLUSIVE" });
      const budget = (await unpriced.client.get(`/v1/runs/${first.run_id}/evidence`)).body.gates.find(
        (g: { id: string }) => g.id === "budget",
      );
      expect(budget).toMatchObject({
        status: "inconclusive",
        reason: `the budget of $10 cannot be checked: no price for the model 'refund-agent' (the environment's endpoint.pricing, or "*")`,
      });

      const p = await seedProject(t, agent.baseUrl, {
        model: "refund-agent+no-usage",
        specYaml: costed("    max_cost_usd: 10\n    max_tokens: 100000\n", 1),
      });
      await p.client.patch(`/v1/environments/${p.environmentId}`, {
        endpoint: { pricing: { "*": PRICES["refund-agent"] } },
      });
      const second = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      expect(await waitForRun(p.client, second.run_id)).toMatchObject({ status: "INCONCLUSIVE" });
      const evidence = (await p.client.get(`/v1/runs/${second.run_id}/evidence`)).body;
      expect(evidence.usage_detail).toMatchObject({
        cost_usd: null,
        cost_unknown: expect.stringMatching(
          /answer\(s\) of 'refund-agent\+no-usage' did not report their input and output tokens$/,
        ),
      });
      const gate = evidence.gates.find((g: { id: string }) => g.id === "budget");
      expect(gate.status).toBe("inconclusive");
      expect(gate.reason).toMatch(
        /reported no token usage: the budget of 100000 tokens cannot be checked.*; the budget of \$10 cannot be checked/,
      );
    });

    it("refuses prices that are not prices, and a budget that names no limit", async () => {
      const p = await seedProject(t, agent.baseUrl);
      const negative = await p.client.patch(`/v1/environments/${p.environmentId}`, {
        endpoint: { pricing: { m: { input_usd_per_million_tokens: -1, output_usd_per_million_tokens: 1 } } },
      });
      expect(negative.status).toBe(400);
      expect(negative.body.error.details[0].path).toMatch(/^body\.endpoint\.pricing\.m\.input_usd_per_million_tokens/);
      expect((await p.client.get(`/v1/environments/${p.environmentId}`)).body.endpoint.pricing).toEqual({});
      const empty = await p.client.call("POST", "/v1/test-specs", {
        body: costed("    {}\n").replace("budget:\n    {}", "budget: {}"),
        contentType: "application/yaml",
      });
      expect(empty.status).toBe(400);
      expect(JSON.stringify(empty.body.error.details)).toContain("set max_tokens, max_cost_usd or both");
    });
  });
});
