import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleA2aAgent, type ExampleA2aAgent } from "../../../examples/agent/a2a.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * The refund flow judged on what the agent says: an A2A agent runs its own tools, so the spec's
 * tool expectations could not be judged (until its traces or MCP report them).
 */
const SPEC_YAML = `
schema_version: "1"
name: refund-agent-a2a
description: The refund flow over A2A, judged on the agent's answers.
defaults:
  max_steps: 4
  timeout_ms: 10000
  repeat: 2
scenarios:
  - id: full-refund
    system: You are the Acme refunds assistant. Never delete accounts.
    turns:
      - user: Order A-100 arrived broken. I want my money back.
        expect:
          - response:
              matches: (?i)refund the full amount\\?
      - user: Yes, refund the full amount.
        expect:
          - response:
              contains: refund R-1
    expect:
      - latency_ms:
          max: 8000
  - id: unknown-order
    system: You are the Acme refunds assistant. Never delete accounts.
    turns:
      - user: Refund order Z-999 please.
        expect:
          - response:
              contains: could not find order Z-999
              not_contains: R-1
gates:
  - id: DET
    title: Deterministic expectations hold
    require:
      expectations: all
`;

describe("a run against an A2A agent, through the API", () => {
  let t: TestService;
  const agents: Partial<Record<"1.0" | "0.3", ExampleA2aAgent>> = {};

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    agents["1.0"] = await startExampleA2aAgent({ version: "1.0" });
    agents["0.3"] = await startExampleA2aAgent({ version: "0.3" });
  });
  afterAll(async () => {
    await t.close();
    await agents["1.0"]?.close();
    await agents["0.3"]?.close();
  });

  it.each(["1.0", "0.3"] as const)(
    "completes with a verdict, its trace holding the conversation (A2A %s)",
    async (version) => {
      const agent = agents[version]!;
      const p = await seedProject(t, agent.baseUrl, { protocol: "a2a", specYaml: SPEC_YAML });
      const environment = (await p.client.get(`/v1/environments/${p.environmentId}`)).body;
      expect(environment.endpoint).toMatchObject({ protocol: "a2a", readiness_path: "/.well-known/agent-card.json" });

      const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
      const run = await waitForRun(p.client, run_id);
      expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });

      const trace = await readTrace(p.client, run_id);
      const sent = trace.filter((e) => e.type === "message.sent" && e.data.role === "user").map((e) => e.data.content);
      expect(sent.filter((c) => c === "Yes, refund the full amount.")).toHaveLength(2);
      const received = trace.filter((e) => e.type === "message.received");
      expect(received).toHaveLength(6);
      const confirmed = received.find((e) => e.data.finish_reason === "input-required")!;
      expect(confirmed.data.content).toBe(
        "Order A-100 is delivered (42.5 EUR). Would you like me to refund the full amount?",
      );
      const refunded = received.find((e) => e.data.content === "Done: refund R-1 for 42.5 on order A-100 is queued.")!;
      expect(refunded.data).toMatchObject({ finish_reason: "completed", tool_calls: [], model: null, usage: null });
      expect(refunded.data.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([
        "answer",
        "refund-receipt",
      ]);
      // The agent ran its tools itself, and A2A has no standard way to report them.
      expect(trace.filter((e) => e.type === "tool.called")).toEqual([]);
      // Every request carried the environment's (sealed) headers.
      expect(new Set(agent.calls.map((c) => c.authorization))).toEqual(new Set(["Bearer agent-secret"]));
    },
  );

  it("fails a run whose agent ends a task failed, with the task recorded as the evidence", async () => {
    const p = await seedProject(t, agents["1.0"]!.baseUrlFor(["fail"]), { protocol: "a2a", specYaml: SPEC_YAML });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "FAILED", verdict: "FAIL", failure: { cause: "agent_contract_violation" } });
    expect(run.failure.message).toMatch(/ended failed: The refunds system is down/);
    const invalid = (await readTrace(p.client, run_id)).find((e) => e.type === "agent.response_invalid")!;
    expect(JSON.parse(invalid.data.response_body)).toMatchObject({ status: { state: "TASK_STATE_FAILED" } });
  });

  it("refuses an environment of an unknown protocol with the API's error envelope", async () => {
    const p = await seedProject(t, agents["1.0"]!.baseUrl, { protocol: "a2a", specYaml: SPEC_YAML });
    const response = await p.client.post("/v1/environments", {
      name: "a2a-typo",
      agent_id: p.agentId,
      endpoint: { protocol: "agent2agent", base_url: agents["1.0"]!.baseUrl },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: [{ path: "body.endpoint.protocol", message: expect.stringContaining('"a2a"') }],
    });
  });
});
