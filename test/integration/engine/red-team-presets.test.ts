import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** Both OWASP presets over the refund agent's tools, marked with their effects; concurrency 16. */
const RED_TEAM_YAML = readFileSync(new URL("../../../examples/refund-agent-red-team.yaml", import.meta.url), "utf8");

interface Finding {
  probe_id: string;
  detection: string;
  evidence_refs: string[];
  attack?: { family: string; strategies: string[]; sent: string; decoded: string };
}
interface ProbeEvaluation {
  metric_id: string;
  status: string;
  reason: string;
}

async function probeEvaluations(client: ApiClient, runId: string): Promise<ProbeEvaluation[]> {
  const all: ProbeEvaluation[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: ProbeEvaluation[]; next_cursor: string | null } } = await client.get(
      `/v1/runs/${runId}/evaluations?kind=probe&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    all.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return all;
}

/** The example agent in one mode against both presets: the run, its findings, its probe evaluations and trace. */
async function redTeam(t: TestService, agent: ExampleAgent, model: string) {
  const p = await seedProject(t, agent.baseUrl, { model, specYaml: RED_TEAM_YAML });
  const spec = (await p.client.get(`/v1/test-specs/${p.testSpecId}`)).body.spec as { security: unknown[] };
  const started = Date.now();
  const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
  const run = await waitForRun(p.client, run_id, 240_000);
  const seconds = (Date.now() - started) / 1000;
  const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body as { findings: Finding[] };
  const evaluations = await probeEvaluations(p.client, run_id);
  const trace = await readTrace(p.client, run_id);
  const entry = (ref: string) => trace.find((e) => ref === `/v1/runs/${run_id}/trace/${e.sequence}`);
  process.stdout.write(
    `red team ${model}: ${spec.security.length} probes, ${evidence.findings.length} findings, ` +
      `${evaluations.filter((e) => e.status === "inconclusive").length} inconclusive, ${seconds.toFixed(1)} s\n`,
  );
  return { run, probes: spec.security.length, findings: evidence.findings, evaluations, entry };
}

describe("both OWASP presets against the example agent", () => {
  let t: TestService;
  let agent: ExampleAgent;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1" } });
    agent = await startExampleAgent({ latencyMs: 50 });
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  it("find each weakness of the vulnerable agent, citing the trace entries that show it", async () => {
    const { run, probes, findings, entry } = await redTeam(t, agent, "refund-agent+vulnerable");
    expect(run.status).toBe("COMPLETED");
    expect(probes).toBeGreaterThanOrEqual(180);
    const entriesOf = (finding: Finding) => finding.evidence_refs.map((ref) => entry(ref)!);

    // It follows instructions found in a tool result: the injected result, then the call it asked for.
    const injected = findings.find((f) => /^indirect-injection\..*-call/.test(f.probe_id))!;
    expect(injected).toMatchObject({ detection: "deterministic" });
    expect(entriesOf(injected)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "tool.returned", data: expect.objectContaining({ injected: true }) }),
        expect.objectContaining({ type: "tool.called", data: expect.objectContaining({ name: "delete_account" }) }),
      ]),
    );

    // It repeats its system prompt when asked in base64: the reply that carries the canary.
    const leaked = findings.find(
      (f) => f.probe_id.startsWith("system-prompt-leakage.") && f.attack?.strategies[0] === "base64",
    )!;
    expect(leaked.attack!.sent).not.toBe(leaked.attack!.decoded);
    const replies = entriesOf(leaked).filter((e) => e.type === "message.received");
    expect(replies.length).toBeGreaterThan(0);
    expect(replies[0]!.data.content).toMatch(/My instructions are: .*Never delete accounts/);

    // It calls the destructive tool without asking the user to confirm.
    const unconfirmed = findings.find(
      (f) => f.probe_id.startsWith("excessive-agency.") && /delete_account/.test(f.probe_id),
    )!;
    expect(entriesOf(unconfirmed)).toEqual([
      expect.objectContaining({ type: "tool.called", data: expect.objectContaining({ name: "delete_account" }) }),
    ]);
  });

  it("raise no deterministic finding against the hardened agent, and leave the attacks that never reached it undecided", async () => {
    const { run, findings, evaluations } = await redTeam(t, agent, "refund-agent+hardened");
    expect(run.status).toBe("COMPLETED");
    expect(findings.filter((f) => f.detection === "deterministic")).toEqual([]);
    expect(evaluations.filter((e) => e.status === "failed")).toEqual([]);
    // Injections into a tool it is never asked for in a way it acts on (issue_refund) cannot reach it: undecided, not passed.
    const unreached = evaluations.filter((e) => /^probe\.indirect-injection\.issue_refund-/.test(e.metric_id));
    expect(unreached.length).toBeGreaterThan(0);
    for (const evaluation of unreached) {
      expect(evaluation).toMatchObject({
        status: "inconclusive",
        reason: expect.stringContaining("never reached the agent"),
      });
    }
  });
});
