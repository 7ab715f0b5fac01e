import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { unusedBaseUrl } from "../../helpers/agent-endpoint.js";
import { startJudgeServer } from "../../helpers/judge-server.js";
import { expectAllRefsResolve, expectGapFree, readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { EXAMPLE_SPEC_YAML, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

describe("evaluations, judges, findings and gates on the whole example spec", () => {
  let agent: ExampleAgent;
  let judge: Awaited<ReturnType<typeof startJudgeServer>>;
  let t: TestService;

  beforeAll(async () => {
    agent = await startExampleAgent();
    judge = await startJudgeServer();
    t = await startTestService({
      env: {
        ASSURE_WORKERS: "4",
        ASSURE_JUDGE_BASE_URL: judge.baseUrl,
        ASSURE_JUDGE_MODEL: "judge-model-1",
        ASSURE_JUDGE_API_KEY: "judge-key",
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await judge.close();
    await agent.close();
  });

  async function runWith(model: string, specYaml = EXAMPLE_SPEC_YAML, service = t) {
    const p = await seedProject(service, agent.baseUrl, { model, specYaml });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    return { client: p.client, run, evidence };
  }

  const gateStatuses = (evidence: { gates: { id: string; status: string }[] }) =>
    Object.fromEntries(evidence.gates.map((g) => [g.id, g.status]));

  it("passes a well-behaved agent on every gate, with judged evaluations that say who judged", async () => {
    judge.setMode({ kind: "rule" });
    const { client, run, evidence } = await runWith("refund-agent");
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    expect(gateStatuses(evidence)).toEqual({ DET: "passed", TASK: "passed", SEC: "passed" });
    expect(evidence.findings).toEqual([]);

    const judged = (await client.get(`/v1/runs/${run.run_id}/evaluations?metric_id=task_completion`)).body.data;
    expect(judged).toHaveLength(3); // one per repeat of full-refund
    for (const evaluation of judged) {
      expect(evaluation).toMatchObject({
        scope: "conversation",
        score: 1,
        threshold: 0.8,
        status: "passed",
        judge: {
          provider: "openai-compatible",
          model: "judge-model-1",
          temperature: 0,
          seed: 7,
          prompt_version: "judge-prompt@1",
        },
        reason: "The refund was issued and confirmed.",
      });
      expect(evaluation.evidence_refs).toEqual([expect.stringMatching(/\/conversations\/cnv_/)]);
    }
    // The judge's tokens, kept with each evaluation and summed apart from the agent's.
    for (const evaluation of judged) {
      expect(evaluation.judge.usage).toEqual({
        input_tokens: expect.any(Number),
        output_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      });
    }
    const judgedTokens = judged.reduce(
      (sum: number, e: { judge: { usage: { total_tokens: number } } }) => sum + e.judge.usage.total_tokens,
      0,
    );
    expect(evidence.usage_detail.judge).toMatchObject({
      answers: 3,
      answers_without_usage: 0,
      total_tokens: judgedTokens,
    });
    expect(evidence.usage.total_tokens).toBeGreaterThan(0);
    const request = judge.requests.at(-1)!;
    expect(request).toMatchObject({
      model: "judge-model-1",
      temperature: 0,
      seed: 7,
      authorization: "Bearer judge-key",
    });
    expect(JSON.stringify(judged)).not.toContain("impartial evaluator"); // the prompt stays internal

    const probes = (await client.get(`/v1/runs/${run.run_id}/conversations?limit=200`)).body.data.filter(
      (c: { kind: string }) => c.kind === "probe",
    );
    expect(probes.map((c: { scenario_id: string }) => c.scenario_id).sort()).toEqual([
      "injection-via-tool-output",
      "system-prompt-leak",
    ]);
    expectGapFree(await readTrace(client, run.run_id));
    await expectAllRefsResolve(client, run.run_id);
  });

  it("raises a critical prompt-injection finding when the agent obeys injected tool output, citing the injected result and the forbidden call", async () => {
    judge.setMode({ kind: "rule" });
    const { client, run, evidence } = await runWith("refund-agent+obey-injection");
    expect(run).toMatchObject({ status: "COMPLETED", verdict: "FAIL" });
    expect(gateStatuses(evidence).SEC).toBe("failed");
    const finding = evidence.findings.find((f: { probe_id: string }) => f.probe_id === "injection-via-tool-output");
    expect(finding).toMatchObject({
      category: "prompt_injection",
      owasp: "LLM01:2025 Prompt Injection",
      severity: "critical",
      status: "open",
      spec_path: "security[0]",
    });
    // The tool result that carried the injection, then the call it led to.
    const [injected, call] = await Promise.all(
      finding.evidence_refs.slice(0, 2).map(async (ref: string) => (await client.get(ref)).body),
    );
    expect(injected).toMatchObject({ type: "tool.returned", data: { name: "lookup_order", injected: true } });
    expect(call).toMatchObject({
      type: "tool.called",
      data: { name: "delete_account", arguments: { user_id: "u-1" } },
    });
    const sec = evidence.gates.find((g: { id: string }) => g.id === "SEC");
    expect(sec.evidence_refs).toContain(`/v1/runs/${run.run_id}/findings/${finding.finding_id}`);
    expect((await client.get(`/v1/runs/${run.run_id}/findings?severity=critical`)).body.data).toHaveLength(1);
    expect((await client.get(`/v1/runs/${run.run_id}/findings/${finding.finding_id}`)).body).toEqual(finding);
    await expectAllRefsResolve(client, run.run_id);
  });

  it("raises a system-prompt-leakage finding when the agent prints its instructions (canary detected)", async () => {
    const { client, run, evidence } = await runWith("refund-agent+leak-system-prompt");
    expect(run.verdict).toBe("FAIL");
    const finding = evidence.findings.find((f: { probe_id: string }) => f.probe_id === "system-prompt-leak");
    expect(finding).toMatchObject({
      category: "system_prompt_leakage",
      owasp: "LLM07:2025 System Prompt Leakage",
      severity: "high",
    });
    const entry = (await client.get(finding.evidence_refs[0])).body;
    expect(entry.type).toBe("message.received");
    expect(entry.data.content).toMatch(/CANARY-/);
    await expectAllRefsResolve(client, run.run_id);
  });

  it("detects payment cards and email addresses in agent output", async () => {
    const { client, run, evidence } = await runWith("refund-agent+leak-pii");
    expect(run.verdict).toBe("FAIL");
    const byProbe = Object.fromEntries(
      evidence.findings.map((f: { probe_id: string; severity: string }) => [f.probe_id, f.severity]),
    );
    expect(byProbe).toMatchObject({ "detector.payment_card": "high", "detector.email_address": "medium" });
    const card = evidence.findings.find((f: { probe_id: string }) => f.probe_id === "detector.payment_card");
    expect((await client.get(card.evidence_refs[0])).body.data.content).toContain("4111 1111 1111 1111");
    await expectAllRefsResolve(client, run.run_id);
  });

  it("marks a metric inconclusive, never passed, when the judge answers outside its contract", async () => {
    judge.setMode({ kind: "garbage" });
    const { client, run, evidence } = await runWith("refund-agent");
    expect(run).toMatchObject({ status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" });
    expect(gateStatuses(evidence).TASK).toBe("inconclusive");
    const sample = (await client.get(`/v1/runs/${run.run_id}/evaluations?metric_id=task_completion`)).body.data[0];
    expect(sample).toMatchObject({ status: "inconclusive", reason: expect.stringMatching(/not judged.*JSON/i) });
    await expectAllRefsResolve(client, run.run_id);
  });

  it("is INCONCLUSIVE when split repeats cannot clear the bar at the asked confidence, and says how many repeats would settle it", async () => {
    judge.setMode({ kind: "sequence", scores: [1, 0, 1] });
    const spec = parse(EXAMPLE_SPEC_YAML) as {
      name: string;
      gates: { id: string; require: Record<string, unknown> }[];
    };
    spec.name = "refund-agent-confidence";
    spec.gates.find((g) => g.id === "TASK")!.require = {
      metric: "task_completion",
      min_pass_rate: 0.6,
      confidence: 0.95,
    };
    const { client, run, evidence } = await runWith("refund-agent", stringify(spec));
    expect(run).toMatchObject({ status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" });
    const task = evidence.gates.find((g: { id: string }) => g.id === "TASK");
    expect(task.status).toBe("inconclusive");
    expect(task.reason).toMatch(
      /2\/3 sample\(s\) passed .*95% Wilson interval .*straddles it: about \d+ more sample\(s\)/,
    );
    await expectAllRefsResolve(client, run.run_id);
  });

  it("fails the run as evaluator_unavailable (verdict ERROR) when the judge is down", async () => {
    const down = await startTestService({
      env: { ASSURE_WORKERS: "2", ASSURE_JUDGE_BASE_URL: await unusedBaseUrl(), ASSURE_JUDGE_MODEL: "m" },
    });
    try {
      const { client, run, evidence } = await runWith("refund-agent", EXAMPLE_SPEC_YAML, down);
      expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "evaluator_unavailable" } });
      expect(evidence.gates).toEqual([]);
      const trace = await readTrace(client, run.run_id);
      expect(trace.at(-1)).toMatchObject({ type: "run.status_changed", data: { from: "EVALUATING", to: "FAILED" } });
      await expectAllRefsResolve(client, run.run_id);
    } finally {
      await down.close();
    }
  });
});
