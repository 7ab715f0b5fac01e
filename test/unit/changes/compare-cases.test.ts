import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { caseIdOf, compareCases, samplesByCase, type CaseEvaluation } from "../../../server/changes/compare-cases.js";
import { specCases } from "../../../server/changes/cases.js";
import { TestSpecDocument } from "../../../server/specs/document.js";
import { refundChecks } from "../../helpers/case-evaluations.js";

const EXAMPLE = TestSpecDocument.parse(
  parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8")),
);
const POLICY = { max_drop: 0.05, confidence: 0.95 };
const REFUND = "full-refund turns[1].expect[0]";

describe("the cases of a head compared with its base", () => {
  it("names an evaluation's case as the spec's cases do", () => {
    const ids = new Set([...specCases(EXAMPLE)].map((c) => c.case_id));
    expect(ids.has(caseIdOf(refundChecks(1, 0)[0]!)!)).toBe(true);
    expect(
      caseIdOf({
        kind: "metric",
        metric_id: "task_completion",
        scenario_id: "full-refund",
        conversation_id: "cnv_1",
        turn: null,
        spec_path: "scenarios[0].metrics[0]",
        status: "passed",
        score: 0.9,
      }),
    ).toBe("full-refund metric task_completion");
    expect(
      caseIdOf({
        kind: "detector",
        metric_id: "detector.email",
        scenario_id: null,
        conversation_id: null,
        turn: null,
        spec_path: null,
        status: "passed",
        score: 1,
      }),
    ).toBeUndefined();
  });

  it("counts a check judged on several turns of one conversation as one sample: it passes when every turn does, its score the mean", () => {
    const turn = (conversation: string, t: number, status: "passed" | "failed", score: number): CaseEvaluation => ({
      kind: "metric",
      metric_id: "politeness",
      scenario_id: "full-refund",
      conversation_id: conversation,
      turn: t,
      spec_path: "scenarios[0].metrics[1]",
      status,
      score,
    });
    const samples = samplesByCase([
      turn("a", 1, "passed", 0.9),
      turn("a", 2, "failed", 0.5),
      turn("b", 1, "passed", 0.8),
      turn("b", 2, "passed", 1),
    ]);
    expect(samples.get("full-refund metric politeness")).toEqual({ passes: 1, runs: 2, scores: [0.7, 0.9] });
  });

  it("finds the check that regressed, over its repeats, and leaves the ones that held unchanged", () => {
    const steady: CaseEvaluation[] = Array.from({ length: 10 }, (_, i) => ({
      kind: "expectation",
      metric_id: "expect.tool_called",
      scenario_id: "full-refund",
      conversation_id: `cnv_${i}`,
      turn: 1,
      spec_path: "scenarios[0].turns[0].expect[0]",
      status: "passed",
      score: 1,
    }));
    const changes = compareCases(
      { spec: EXAMPLE, evaluations: [...refundChecks(10, 0), ...steady] },
      { spec: EXAMPLE, evaluations: [...refundChecks(2, 8), ...steady] },
      POLICY,
    );
    expect(changes.find((c) => c.case_id === REFUND)).toMatchObject({
      class: "regressed",
      base: { passes: 10, runs: 10 },
      head: { passes: 2, runs: 10 },
    });
    expect(changes.find((c) => c.case_id === "full-refund turns[0].expect[0]")).toMatchObject({ class: "unchanged" });
  });

  it("counts a case whose definition changed as new at the head and removed from the base, never as the same case", () => {
    const edited = structuredClone(EXAMPLE);
    (
      edited.scenarios![0]!.turns[1]!.expect![0] as { tool_called: { args: Record<string, unknown> } }
    ).tool_called.args.amount = 40;
    const changes = compareCases(
      { spec: EXAMPLE, evaluations: refundChecks(10, 0) },
      { spec: edited, evaluations: refundChecks(2, 8) },
      POLICY,
    ).filter((c) => c.case_id === REFUND);
    expect(changes.map((c) => c.class).sort()).toEqual(["new", "removed"]);
  });

  it("says nothing of a case the head did not judge", () => {
    expect(
      compareCases({ spec: EXAMPLE, evaluations: refundChecks(5, 0) }, { spec: EXAMPLE, evaluations: [] }, POLICY),
    ).toEqual([]);
  });
});
