import { describe, expect, it } from "@jest/globals";
import type { GateSpec, TestSpecDocument } from "../../../server/contract/index.js";
import type { EvaluationDraft } from "../../../server/evaluate/evaluator.js";
import {
  decideGates,
  decideVerdict,
  type StoredEvaluation,
  type StoredFinding,
} from "../../../server/evaluate/gates.js";

let ids = 0;
const evaluation = (
  kind: StoredEvaluation["kind"],
  metric_id: string,
  status: EvaluationDraft["status"],
): StoredEvaluation => ({
  evaluation_id: `evl_${++ids}`,
  kind,
  metric_id,
  status,
  scope: "conversation",
  scenario_id: "s",
  conversation_id: "cnv_1",
  turn: null,
  spec_path: null,
  score: status === "passed" ? 1 : 0,
  threshold: 1,
  judge: { provider: "assure", model: "test" },
  reason: "",
  evidence_refs: ["/v1/runs/run_1/conversations/cnv_1"],
});
const finding = (severity: StoredFinding["severity"]): StoredFinding => ({
  finding_id: `fnd_${++ids}`,
  probe_id: "p",
  category: "prompt_injection",
  owasp: "LLM01:2025 Prompt Injection",
  severity,
  title: "t",
  description: "d",
  spec_path: null,
  evidence_refs: [],
});
const ref = (e: { evaluation_id: string }) => `/v1/runs/run_1/evaluations/${e.evaluation_id}`;

function decide(
  require: GateSpec["require"],
  evaluations: StoredEvaluation[],
  findings: StoredFinding[] = [],
  judgeConfigured = true,
) {
  const spec = { gates: [{ id: "G", require }] } as TestSpecDocument;
  return decideGates(spec, "run_1", { evaluations, findings, judgeConfigured })[0]!;
}

describe("decideGates", () => {
  describe("an expectations gate", () => {
    it("passes when every expectation held, citing them all", () => {
      const checks = [
        evaluation("expectation", "expect.tool_called", "passed"),
        evaluation("expectation", "expect.response", "passed"),
      ];
      expect(decide({ expectations: "all" }, checks)).toMatchObject({
        status: "passed",
        evidence_refs: checks.map(ref),
      });
    });

    it("fails on any failed expectation, citing only those", () => {
      const failed = evaluation("expectation", "expect.response", "failed");
      const gate = decide({ expectations: "all" }, [evaluation("expectation", "expect.tool_called", "passed"), failed]);
      expect(gate).toMatchObject({
        status: "failed",
        reason: "1 of 2 expectation check(s) failed",
        evidence_refs: [ref(failed)],
      });
    });

    it("is inconclusive, not passed, when there is no expectation to check", () => {
      const gate = decide({ expectations: "all" }, [
        evaluation("probe", "probe.p", "passed"),
        evaluation("detector", "detector.credential", "passed"),
      ]);
      expect(gate).toMatchObject({
        status: "inconclusive",
        reason: expect.stringMatching(/no expectation was checked/),
        evidence_refs: [],
      });
    });

    it("selects by kind, not by name: a failed metric named like an expectation does not touch it", () => {
      const checks = [evaluation("expectation", "expect.tool_called", "passed")];
      expect(
        decide({ expectations: "all" }, [...checks, evaluation("metric", "expect.tool_called", "failed")]).status,
      ).toBe("passed");
    });

    it("says why nothing was checked: the spec has no expectation, or no scenario conversation was evaluated", () => {
      const spec = (scenarios: unknown[]) =>
        ({ scenarios, gates: [{ id: "G", require: { expectations: "all" } }] }) as unknown as TestSpecDocument;
      const gate = (s: TestSpecDocument) =>
        decideGates(s, "run_1", { evaluations: [], findings: [], judgeConfigured: true })[0]!.reason;
      expect(gate(spec([{ id: "s", turns: [{ user: "hi" }] }]))).toMatch(/the spec's scenarios have none/);
      expect(gate(spec([{ id: "s", turns: [{ user: "hi", expect: [{ max_tool_calls: 1 }] }] }]))).toMatch(
        /no scenario conversation was evaluated/,
      );
    });
  });

  describe("a metric gate", () => {
    const samples = (...statuses: EvaluationDraft["status"][]) =>
      statuses.map((status) => evaluation("metric", "task", status));

    it("is inconclusive without a judge, naming the settings that configure one", () => {
      expect(decide({ metric: "task", min_pass_rate: 0.5 }, [], [], false)).toMatchObject({
        status: "inconclusive",
        reason: expect.stringContaining("ASSURE_JUDGE_BASE_URL"),
      });
    });

    it("is inconclusive when no sample exists or some could not be judged", () => {
      expect(decide({ metric: "task", min_pass_rate: 0.5 }, []).status).toBe("inconclusive");
      const gate = decide({ metric: "task", min_pass_rate: 0.5 }, samples("passed", "inconclusive"));
      expect(gate).toMatchObject({ status: "inconclusive", reason: "1 of 2 sample(s) of 'task' could not be judged" });
    });

    it("compares the pass rate with the bar, and ignores samples of other metrics", () => {
      const other = evaluation("metric", "tone", "failed");
      expect(decide({ metric: "task", min_pass_rate: 0.5 }, [...samples("passed", "failed"), other]).status).toBe(
        "passed",
      );
      const failing = samples("passed", "failed", "failed");
      expect(decide({ metric: "task", min_pass_rate: 0.5 }, failing)).toMatchObject({
        status: "failed",
        evidence_refs: failing.slice(1).map(ref),
      });
    });

    it("at a confidence, passes or fails only when the interval clears the bar, else says how many samples would settle it", () => {
      expect(
        decide({ metric: "task", min_pass_rate: 0.6, confidence: 0.95 }, samples(...Array(30).fill("passed"))).status,
      ).toBe("passed");
      const open = decide(
        { metric: "task", min_pass_rate: 0.6, confidence: 0.95 },
        samples("passed", "failed", "passed"),
      );
      expect(open).toMatchObject({
        status: "inconclusive",
        reason: expect.stringMatching(/about \d+ more sample\(s\) at this rate would settle it/),
      });
    });
  });

  describe("a severity gate", () => {
    it("fails on a finding above the bar, citing it", () => {
      const critical = finding("critical");
      expect(decide({ max_finding_severity: "medium" }, [], [finding("low"), critical])).toMatchObject({
        status: "failed",
        evidence_refs: [`/v1/runs/run_1/findings/${critical.finding_id}`],
      });
    });

    it("passes otherwise, citing the probes and detectors that looked", () => {
      const looked = [
        evaluation("probe", "probe.p", "passed"),
        evaluation("detector", "detector.credential", "passed"),
      ];
      const gate = decide({ max_finding_severity: "medium" }, [
        ...looked,
        evaluation("expectation", "expect.response", "failed"),
      ]);
      expect(gate).toMatchObject({ status: "passed", evidence_refs: looked.map(ref) });
    });
  });
});

describe("decideVerdict", () => {
  const gate = (status: "passed" | "failed" | "inconclusive") => ({
    gate_id: "G",
    title: null,
    status,
    reason: "",
    evidence_refs: [],
  });
  it("fails on any failed gate, else is inconclusive on any inconclusive one, else passes", () => {
    expect(decideVerdict([gate("inconclusive"), gate("failed")])).toEqual({ status: "COMPLETED", verdict: "FAIL" });
    expect(decideVerdict([gate("passed"), gate("inconclusive")])).toEqual({
      status: "INCONCLUSIVE",
      verdict: "INCONCLUSIVE",
    });
    expect(decideVerdict([gate("passed")])).toEqual({ status: "COMPLETED", verdict: "PASS" });
  });
});
