import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { expectAllRefsResolve, expectGapFree, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { EXAMPLE_SPEC_YAML, deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

describe("run engine against the example agent", () => {
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

  async function runWith(model: string, specYaml = deterministicSpecYaml()) {
    const p = await seedProject(t, agent.baseUrl, { model, specYaml });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    return { p, run, client: p.client };
  }

  it("passes a well-behaved agent: COMPLETED, PASS, a gap-free trace and refs that all resolve", async () => {
    const { run, client } = await runWith("refund-agent");
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS", failure: null });
    expect(run.started_at).not.toBeNull();
    expect(run.ended_at).not.toBeNull();

    const trace = await readTrace(client, run.run_id);
    expectGapFree(trace);
    const types = new Set(trace.map((e) => e.type));
    for (const type of [
      "run.status_changed",
      "message.sent",
      "message.received",
      "tool.called",
      "tool.returned",
      "evaluation.completed",
    ]) {
      expect(types).toContain(type);
    }
    expect(trace.filter((e) => e.type === "run.status_changed").map((e) => e.data.to)).toEqual([
      "RUNNING",
      "EVALUATING",
      "COMPLETED",
    ]);
    const call = trace.find((e) => e.type === "tool.called")!;
    expect(call.data).toMatchObject({
      name: "lookup_order",
      arguments: { order_id: "A-100" },
      arguments_raw: '{"order_id":"A-100"}',
      turn: 1,
      step: 1,
    });
    const returned = trace.find((e) => e.type === "tool.returned" && e.data.call_id === call.data.call_id)!;
    expect(returned.data.result).toMatchObject({ order_id: "A-100", amount: 42.5 });

    const conversations = (await client.get(`/v1/runs/${run.run_id}/conversations`)).body.data;
    expect(conversations).toHaveLength(6); // 2 scenarios × repeat 3
    expect(conversations.every((c: { status: string }) => c.status === "completed")).toBe(true);

    const evidence = (await client.get(`/v1/runs/${run.run_id}/evidence`)).body;
    expect(evidence).toMatchObject({ verdict: "PASS", status: "COMPLETED", gates: [{ id: "DET", status: "passed" }] });
    expect(evidence.evaluations).toMatchObject({ failed: 0 });
    // 3 repeats × (full-refund: 3 turn checks + 4 conversation checks; unknown-order: 2 + 1), and 3 detectors over the run
    expect(evidence.evaluations.total).toBe(33);
    expect(await expectAllRefsResolve(client, run.run_id)).toBeGreaterThan(33);
  });

  it("pages through a run's trace, conversations and evaluations in order", async () => {
    const { run, client } = await runWith("refund-agent");
    const walk = async (path: string, limit: number, key: string) => {
      const keys: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { data: Record<string, unknown>[]; next_cursor: string | null } } = await client.get(
          // The first page may start `after` a sequence; later pages continue from the cursor alone.
          cursor
            ? `${path.split("?")[0]}?limit=${limit}&cursor=${encodeURIComponent(cursor)}`
            : `${path}${path.includes("?") ? "&" : "?"}limit=${limit}`,
        );
        keys.push(...page.body.data.map((item) => String(item[key])));
        cursor = page.body.next_cursor;
      } while (cursor);
      return keys;
    };
    const base = `/v1/runs/${run.run_id}`;
    const trace = await walk(`${base}/trace`, 7, "sequence");
    expect(trace).toEqual(trace.map((_, i) => String(i + 1)));
    expect(await walk(`${base}/events`, 50, "sequence")).toEqual(trace);
    expect(await walk(`${base}/trace?after=10`, 9, "sequence")).toEqual(trace.slice(10));
    const conversations = await walk(`${base}/conversations`, 4, "conversation_id");
    expect(conversations).toHaveLength(6);
    expect([...conversations].sort()).toEqual(conversations);
    expect(await walk(`${base}/evaluations`, 7, "evaluation_id")).toHaveLength(33);
    const traceCursor = (await client.get(`${base}/trace?limit=5`)).body.next_cursor;
    expect((await client.get(`${base}/evaluations?cursor=${encodeURIComponent(traceCursor)}`)).status).toBe(400);
    expect((await client.get(`${base}/trace/0`)).status).toBe(400);
    expect((await client.get(`${base}/trace?after=3&cursor=${encodeURIComponent(traceCursor)}`)).status).toBe(400);
    expect((await client.get(`${base}/trace/99999`)).status).toBe(404);
  });

  it("shows each turn with its steps, tool calls and results", async () => {
    const { run, client } = await runWith("refund-agent", deterministicSpecYaml({ repeat: 1 }));
    const conversation = (await client.get(`/v1/runs/${run.run_id}/conversations`)).body.data.find(
      (c: { scenario_id: string }) => c.scenario_id === "full-refund",
    );
    const turn = (await client.get(`/v1/runs/${run.run_id}/conversations/${conversation.conversation_id}/turns/2`))
      .body;
    expect(turn.user).toBe("Yes, refund the full amount.");
    expect(turn.steps[0].tool_calls[0]).toMatchObject({
      name: "issue_refund",
      arguments: { order_id: "A-100", amount: 42.5 },
      result: { refund_id: "R-1" },
    });
    expect(turn.reply).toMatch(/refund R-1/);
    const full = (await client.get(`/v1/runs/${run.run_id}/conversations/${conversation.conversation_id}`)).body;
    expect(full.messages.map((m: { role: string }) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(
      (await client.get(`/v1/runs/${run.run_id}/conversations/${conversation.conversation_id}/turns/9`)).status,
    ).toBe(404);
  });

  it("fails an agent that calls tools with wrong arguments, pointing at the calls", async () => {
    const { run, client } = await runWith("refund-agent+wrong-arguments");
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "FAIL", failure: null });
    const evidence = (await client.get(`/v1/runs/${run.run_id}/evidence`)).body;
    expect(evidence.gates[0]).toMatchObject({ id: "DET", status: "failed" });
    const failed = (await client.get(`/v1/runs/${run.run_id}/evaluations?status=failed&metric_id=expect.tool_called`))
      .body.data;
    expect(failed.length).toBeGreaterThan(0);
    const first = failed[0];
    expect(first).toMatchObject({ score: 0, threshold: 1, judge: { provider: "assure" }, scope: "turn" });
    expect(first.reason).toMatch(/not with/);
    const entry = (await client.get(first.evidence_refs[0])).body;
    expect(entry.type).toBe("tool.called");
    expect(evidence.gates[0].evidence_refs).toContain(`/v1/runs/${run.run_id}/evaluations/${first.evaluation_id}`);
    await expectAllRefsResolve(client, run.run_id);
  });

  it("records unparsable tool arguments and unknown tools without failing the run", async () => {
    const bad = await runWith("refund-agent+bad-arguments-json", deterministicSpecYaml({ repeat: 1 }));
    expect(bad.run).toMatchObject({ status: "COMPLETED", verdict: "FAIL" });
    const call = (await readTrace(bad.client, bad.run.run_id)).find((e) => e.type === "tool.called")!;
    expect(call.data.arguments_raw).toBe("{order_id: A-100");
    expect(call.data.arguments_error).toBeDefined();

    const unknown = await runWith("refund-agent+unknown-tool", deterministicSpecYaml({ repeat: 1 }));
    expect(unknown.run.status).toBe("COMPLETED");
    const returned = (await readTrace(unknown.client, unknown.run.run_id)).find((e) => e.type === "tool.returned")!;
    expect(returned.data).toMatchObject({
      name: "refund_everything",
      result: { error: "unknown tool 'refund_everything'" },
    });
  });

  it.each(["malformed-json", "no-choices", "invalid-tool-calls"])(
    "fails the run as agent_contract_violation (verdict FAIL) on %s, with the response in the trace",
    async (behaviour) => {
      const { run, client } = await runWith(`refund-agent+${behaviour}`);
      expect(run).toMatchObject({ status: "FAILED", verdict: "FAIL", failure: { cause: "agent_contract_violation" } });
      const trace = await readTrace(client, run.run_id);
      expectGapFree(trace);
      const invalid = trace.find((e) => e.type === "agent.response_invalid")!;
      expect(invalid.data.response_body).toBeDefined();
      expect(trace.at(-1)).toMatchObject({ type: "run.status_changed", data: { from: "RUNNING", to: "FAILED" } });
      await expectAllRefsResolve(client, run.run_id);
    },
  );

  it("fails the run as target_unreachable (verdict ERROR) when the agent keeps answering HTTP 500", async () => {
    const { run } = await runWith("refund-agent+http-500");
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "target_unreachable" } });
    expect(run.failure.message).toMatch(/failed 3 times; last: HTTP 500/);
  });

  it("fails the run as target_unreachable (verdict ERROR) when the agent drops connections", async () => {
    const { run } = await runWith("refund-agent+drop-connection");
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "target_unreachable" } });
    expect(run.failure.message).toMatch(/3 times/);
  });

  it("fails the run as target_unreachable when the agent goes away after the run was accepted", async () => {
    const gone = await startExampleAgent();
    const p = await seedProject(t, gone.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    await t.service.worker.stop(0);
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    await gone.close();
    t.service.worker.start();
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "target_unreachable" } });
  });

  it("fails the run as timeout (verdict ERROR) when an agent call exceeds timeout_ms", async () => {
    const { run } = await runWith("refund-agent+slow", deterministicSpecYaml({ repeat: 1, timeout_ms: 300 }));
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "timeout" } });
  });

  it("retries transient agent errors transparently", async () => {
    const { run, client } = await runWith("refund-agent+flaky", deterministicSpecYaml({ repeat: 1 }));
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    const received = (await readTrace(client, run.run_id)).filter((e) => e.type === "message.received");
    expect(received.some((e) => e.data.attempts === 2)).toBe(true);
  });

  it("never passes a spec whose metrics it cannot judge: INCONCLUSIVE without a judge, saying what was not evaluated", async () => {
    const { run, client } = await runWith("refund-agent", EXAMPLE_SPEC_YAML);
    expect(run).toMatchObject({ status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" });
    const gates = (await client.get(`/v1/runs/${run.run_id}/evidence`)).body.gates;
    expect(gates.map((g: { id: string; status: string }) => [g.id, g.status])).toEqual([
      ["DET", "passed"],
      ["TASK", "inconclusive"],
      ["SEC", "passed"],
    ]);
    expect(gates[1].reason).toMatch(/task_completion.*needs an LLM judge.*not evaluated/);
    await expectAllRefsResolve(client, run.run_id);
  });
});
