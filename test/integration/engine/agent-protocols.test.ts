import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { EndpointProtocol } from "../../../server/contract/index.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** The model protocols: the agent's function tools are answered from the spec's mocks by assure. */
const MODEL_PROTOCOLS: EndpointProtocol[] = ["openai-chat", "openai-responses", "anthropic-messages"];

describe("the model protocols, against the example agent", () => {
  let t: TestService;
  let agent: ExampleAgent;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "4" } });
    agent = await startExampleAgent({ slowMs: 1500 });
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  async function runWith(protocol: EndpointProtocol, model: string, specYaml = deterministicSpecYaml()) {
    const p = await seedProject(t, agent.baseUrlFor(protocol), { model, specYaml, protocol });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    return { run: await waitForRun(p.client, run_id), client: p.client };
  }

  /** Each evaluation as what it judged (scenario, repeat, turn, check) and what it found. */
  async function resultsOf(client: ApiClient, runId: string): Promise<string[]> {
    const conversations = (await client.get(`/v1/runs/${runId}/conversations?limit=200`)).body.data as {
      conversation_id: string;
      repeat_index: number;
    }[];
    const repeatOf = new Map(conversations.map((c) => [c.conversation_id, c.repeat_index]));
    const evaluations = (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as {
      scenario_id: string | null;
      conversation_id: string | null;
      turn: number | null;
      metric_id: string;
      spec_path: string | null;
      status: string;
      score: number;
    }[];
    return evaluations
      .map((e) =>
        [
          e.scenario_id,
          e.conversation_id && repeatOf.get(e.conversation_id),
          e.turn,
          e.metric_id,
          e.spec_path,
          e.status,
          e.score,
        ].join(" "),
      )
      .sort();
  }

  it.each(["refund-agent", "refund-agent+wrong-arguments", "refund-agent+unknown-tool"])(
    "gives %s the same verdict and the same result for every case in each protocol",
    async (model) => {
      const outcomes = [];
      for (const protocol of MODEL_PROTOCOLS) {
        const { run, client } = await runWith(protocol, model);
        expect(run.status).toMatch(/COMPLETED/);
        outcomes.push({ protocol, verdict: run.verdict, results: await resultsOf(client, run.run_id) });
      }
      expect(outcomes[0]!.results.length).toBeGreaterThan(20);
      for (const outcome of outcomes.slice(1)) {
        expect({ protocol: outcome.protocol, verdict: outcome.verdict, results: outcome.results }).toEqual({
          protocol: outcome.protocol,
          verdict: outcomes[0]!.verdict,
          results: outcomes[0]!.results,
        });
      }
      expect(outcomes[0]!.verdict).toBe(model === "refund-agent" ? "PASS" : "FAIL");
    },
  );

  describe.each(MODEL_PROTOCOLS)("%s", (protocol) => {
    it("holds multi-turn conversations, each function call answered from the mocks by assure", async () => {
      const { run, client } = await runWith(protocol, "refund-agent", deterministicSpecYaml({ repeat: 1 }));
      expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const trace = await readTrace(client, run.run_id);
      const calls = trace.filter((e) => e.type === "tool.called");
      expect(calls.map((e) => e.data.name)).toEqual(expect.arrayContaining(["lookup_order", "issue_refund"]));
      for (const call of calls) expect(call.data).toMatchObject({ executed_by: "assure", source: { kind: "mock" } });
      const turns = new Set(trace.filter((e) => e.type === "message.received").map((e) => e.data.turn));
      expect(turns.size).toBeGreaterThan(1);
      const received = trace.find((e) => e.type === "message.received")!;
      expect(received.data.usage.total_tokens).toBeGreaterThan(0);
      expect(received.data.model).toBe("refund-agent");
    });

    it("retries transient errors, and waits out the Retry-After of a 429", async () => {
      const flaky = await runWith(protocol, "refund-agent+flaky", deterministicSpecYaml({ repeat: 1 }));
      expect(flaky.run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const received = (await readTrace(flaky.client, flaky.run.run_id)).filter((e) => e.type === "message.received");
      expect(received.some((e) => e.data.attempts === 2)).toBe(true);

      // An agent that takes one call at a time and answers 429 + Retry-After: 1 to the others.
      const busy = await startExampleAgent({ latencyMs: 30, acceptInFlight: 1 });
      let limited;
      try {
        const p = await seedProject(t, busy.baseUrlFor(protocol), {
          model: "refund-agent+rate-limited",
          specYaml: deterministicSpecYaml({ repeat: 1, concurrency: 16 }),
          protocol,
        });
        const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
        limited = { run: await waitForRun(p.client, run_id, 60_000), client: p.client };
      } finally {
        await busy.close();
      }
      expect(limited.run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const throttled = (await readTrace(limited.client, limited.run.run_id)).filter(
        (e) => e.type === "agent.throttled",
      );
      expect(throttled.length).toBeGreaterThan(0);
      expect(throttled[0]!.data).toMatchObject({ http_status: 429, retry_after_ms: 1000 });
    });

    // An agent that cannot be reached is an error of the run; one that breaks its protocol fails it.
    it.each([
      ["refund-agent+http-500", "target_unreachable", "ERROR", /failed 3 times; last: HTTP 500/],
      ["refund-agent+malformed-json", "agent_contract_violation", "FAIL", /not JSON/],
      ["refund-agent+no-choices", "agent_contract_violation", "FAIL", /contract/],
      ["refund-agent+invalid-tool-calls", "agent_contract_violation", "FAIL", /contract/],
    ])("maps %s to the failure cause %s (verdict %s)", async (model, cause, verdict, message) => {
      const { run, client } = await runWith(protocol, model, deterministicSpecYaml({ repeat: 1 }));
      expect(run).toMatchObject({ status: "FAILED", verdict, failure: { cause } });
      expect(run.failure.message).toMatch(message);
      if (cause === "agent_contract_violation") {
        const invalid = (await readTrace(client, run.run_id)).find((e) => e.type === "agent.response_invalid")!;
        expect(invalid.data).toMatchObject({ http_status: 200, response_body: expect.any(String) });
      }
    });
  });
});
