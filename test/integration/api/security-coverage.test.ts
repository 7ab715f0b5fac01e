import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { refundSpec } from "../../unit/specs/security-library/refund-spec.js";

describe("a run's security coverage", () => {
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

  it("is in its evidence as a table per category, and a coverage gate fails naming the categories not probed", async () => {
    const leaky = await seedProject(t, agent.baseUrl, { model: "refund-agent+leak-system-prompt" });
    const spec = refundSpec([{ family: "system-prompt-leakage" }], {
      name: "coverage-run",
      gates: [
        { id: "SEC", require: { max_finding_severity: "medium" } },
        { id: "COV", require: { coverage: "owasp-llm-2025" } },
      ],
    });
    const created = await leaky.client.post("/v1/test-specs", { project_id: leaky.projectId, spec });
    expect(created.status).toBe(201);
    const probes = created.body.spec.security.length as number;
    const { run_id } = await startRun(leaky.client, {
      test_spec_id: created.body.test_spec_id,
      environment_id: leaky.environmentId,
    });
    expect((await waitForRun(leaky.client, run_id, 60_000)).status).toBe("COMPLETED");

    const evidence = (await leaky.client.get(`/v1/runs/${run_id}/evidence`)).body;
    const rows = evidence.security_coverage as Record<string, unknown>[];
    expect(rows.map((row) => row.id)).toEqual([
      "LLM01",
      "LLM02",
      "LLM03",
      "LLM04",
      "LLM05",
      "LLM06",
      "LLM07",
      "LLM08",
      "LLM09",
      "LLM10",
    ]);
    const tripped = new Set(evidence.findings.map((f: { probe_id: string }) => f.probe_id)).size;
    expect(tripped).toBeGreaterThan(0);
    expect(rows.find((row) => row.id === "LLM07")).toEqual({
      taxonomy: "owasp_llm",
      id: "LLM07",
      name: "System Prompt Leakage",
      probed: true,
      probes,
      tripped,
      inconclusive: 0,
      not_probed: null,
    });
    expect(rows.find((row) => row.id === "LLM01")).toMatchObject({
      probed: false,
      probes: 0,
      not_probed: "no probe in the spec names it",
    });
    const gate = evidence.gates.find((g: { gate_id: string }) => g.gate_id === "COV");
    expect(gate).toMatchObject({
      status: "failed",
      reason: "6 of 7 owasp-llm-2025 categories not probed: LLM01, LLM02, LLM05, LLM06, LLM09, LLM10",
    });
    expect(evidence.gates.find((g: { gate_id: string }) => g.gate_id === "SEC").status).toBe("failed");
  });
});
