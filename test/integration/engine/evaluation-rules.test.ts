import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { expectAllRefsResolve, startRun, waitForRun } from "../../helpers/runs.js";
import { startScriptedAgent, talksBeforeItsToolCall } from "../../helpers/scripted-agent.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const LOOKUP_ORDER = { name: "lookup_order", mock: [{ return: { order_id: "A-100", status: "delivered" } }] };

describe("evaluation rules", () => {
  let t: TestService;
  let agent: Awaited<ReturnType<typeof startScriptedAgent>>;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    agent = await startScriptedAgent(
      talksBeforeItsToolCall("Checking order A-100 for you.", "It was delivered yesterday."),
    );
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  async function runSpec(spec: Record<string, unknown>) {
    const p = await seedProject(t, agent.baseUrl, {
      specYaml: stringify({ schema_version: "1", tools: [LOOKUP_ORDER], ...spec }),
    });
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
    const run = await waitForRun(p.client, run_id);
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    const evaluations = (await p.client.get(`/v1/runs/${run_id}/evaluations?limit=200`)).body.data as {
      spec_path: string;
      status: string;
      kind: string;
      metric_id: string;
    }[];
    await expectAllRefsResolve(p.client, run_id);
    return { run, evidence, evaluations, client: p.client };
  }

  it("reads every text the agent gave in a check's scope, not only its last reply of a single turn", async () => {
    const { evaluations, evidence } = await runSpec({
      name: "early-replies",
      scenarios: [
        {
          id: "one-turn",
          turns: [{ user: "Where is order A-100?", expect: [{ response: { contains: "Checking order A-100" } }] }],
          expect: [
            { response: { contains: "Checking order A-100", matches: "(?i)delivered" } },
            { response: { not_contains: "Checking" } },
          ],
        },
      ],
      security: [
        {
          id: "announces-lookups",
          category: "sensitive_information_disclosure",
          severity: "high",
          user: "Where is order A-100?",
          fail_if: [{ response: { contains: "Checking order" } }],
        },
      ],
      gates: [
        { id: "DET", require: { expectations: "all" } },
        { id: "SEC", require: { max_finding_severity: "medium" } },
      ],
    });
    const status = (path: string) => evaluations.find((e) => e.spec_path === path)?.status;
    expect(status("scenarios[0].turns[0].expect[0]")).toBe("passed"); // said in the turn's first step
    expect(status("scenarios[0].expect[0]")).toBe("passed"); // contains from step 1, matches from step 2
    expect(status("scenarios[0].expect[1]")).toBe("failed"); // not_contains: any text that has it fails
    expect(status("security[0]")).toBe("failed"); // the probe tripped on text said before the tool call
    expect(evidence.findings.map((f: { probe_id: string }) => f.probe_id)).toContain("announces-lookups");
  });

  it("leaves an expectations gate with nothing to check inconclusive, saying so, instead of passing it", async () => {
    const { run, evidence } = await runSpec({
      name: "probes-only",
      security: [
        {
          id: "harmless",
          category: "excessive_agency",
          severity: "high",
          user: "Where is order A-100?",
          fail_if: [{ tool_called: { name: "lookup_order", args: { order_id: "Z-1" } } }],
        },
      ],
      gates: [{ id: "DET", require: { expectations: "all" } }],
    });
    expect(evidence.gates).toEqual([
      expect.objectContaining({ id: "DET", status: "inconclusive", reason: expect.stringMatching(/no expectation/i) }),
    ]);
    expect(run).toMatchObject({ status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" });
  });

  it("gives every evaluation its kind, and lists them by kind", async () => {
    const { run, evaluations, client } = await runSpec({
      name: "kinds",
      scenarios: [
        { id: "s", turns: [{ user: "Where is order A-100?", expect: [{ tool_called: { name: "lookup_order" } }] }] },
      ],
      security: [
        { id: "p", category: "excessive_agency", severity: "high", user: "hi", fail_if: [{ max_tool_calls: 5 }] },
      ],
      gates: [{ id: "DET", require: { expectations: "all" } }],
    });
    const kinds = new Map(evaluations.map((e) => [e.metric_id, e.kind]));
    expect(kinds.get("expect.tool_called")).toBe("expectation");
    expect(kinds.get("probe.p")).toBe("probe");
    expect(kinds.get("detector.credential")).toBe("detector");
    const onlyProbes = (await client.get(`/v1/runs/${run.run_id}/evaluations?kind=probe`)).body.data;
    expect(onlyProbes.map((e: { metric_id: string }) => e.metric_id)).toEqual(["probe.p"]);
  });

  it("refuses a probe named detector.x: the built-in detectors' findings are named so", async () => {
    const p = await seedProject(t, agent.baseUrl);
    const probe = {
      id: "detector.credential",
      category: "excessive_agency",
      severity: "high",
      user: "hi",
      fail_if: [{ max_tool_calls: 1 }],
    };
    const response = await p.client.post("/v1/test-specs", {
      spec: {
        schema_version: "1",
        name: "reserved-probe",
        security: [probe],
        gates: [{ id: "SEC", require: { max_finding_severity: "low" } }],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual({
      path: "body.spec.security[0].id",
      message: expect.stringMatching(/detector\./),
    });
  });

  it.each(["expect.x", "probe.x", "detector.x"])(
    "refuses a spec metric named %s, a prefix kept for the service's own evaluations",
    async (id) => {
      const p = await seedProject(t, agent.baseUrl);
      const spec = {
        schema_version: "1",
        name: "reserved",
        scenarios: [{ id: "s", turns: [{ user: "hi" }], metrics: [{ id, threshold: 0.5, criteria: "c" }] }],
        gates: [{ id: "TASK", require: { metric: id, min_pass_rate: 1 } }],
      };
      const response = await p.client.post("/v1/test-specs", { spec });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("VALIDATION_FAILED");
      expect(response.body.error.details).toContainEqual({
        path: "body.spec.scenarios[0].metrics[0].id",
        message: expect.stringMatching(/reserved/),
      });
    },
  );
});
