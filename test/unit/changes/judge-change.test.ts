import { describe, expect, it } from "@jest/globals";
import {
  judgeChange,
  summarizeChanges,
  withChange,
  type ChangeSide,
  type CitedEvaluation,
} from "../../../server/changes/judge-change.js";
import { TestSpecDocument } from "../../../server/specs/document.js";

const spec = (gates: unknown[]) =>
  TestSpecDocument.parse({
    schema_version: "1",
    name: "s",
    scenarios: [{ id: "a", turns: [{ user: "hi", expect: [{ response: { contains: "hello" } }] }] }],
    gates,
  });

/** `passes` of `runs` conversations passed the scenario's one check. */
function side(runId: string, document: TestSpecDocument, passes: number, runs: number): ChangeSide {
  const evaluations: CitedEvaluation[] = Array.from({ length: runs }, (_, i) => ({
    evaluation_id: `ev_${runId}_${i}`,
    kind: "expectation",
    metric_id: "expect.response",
    scenario_id: "a",
    spec_path: "scenarios[0].turns[0].expect[0]",
    status: i < passes ? "passed" : "failed",
    score: i < passes ? 1 : 0,
    conversation_id: `conv_${runId}_${i}`,
    turn: 1,
  }));
  return { run_id: runId, spec: document, evaluations };
}

describe("judging a planned run against its baseline's", () => {
  const gated = spec([{ id: "NOREG", require: { no_regression: { max_drop: 0.05, confidence: 0.95 } } }]);

  it("fails a no_regression gate on a significant drop, citing the head's failures beside the base's passes", () => {
    const change = judgeChange(side("head", gated, 0, 5), {
      side: side("base", gated, 5, 5),
      commit_sha: "abcdef0123",
    });
    expect(change.counts).toMatchObject({ regressed: 1, unchanged: 0 });
    expect(change.cases[0]).toMatchObject({
      case_id: "a turns[0].expect[0]",
      class: "regressed",
      rate_drop: 1,
      rate_p: 0.004,
      gate_ids: ["NOREG"],
    });
    expect(change.gates).toEqual([
      expect.objectContaining({
        gate_id: "NOREG",
        status: "failed",
        evidence_refs: expect.arrayContaining(["/v1/runs/head/evaluations/ev_head_0"]),
        baseline_refs: expect.arrayContaining(["/v1/runs/base/evaluations/ev_base_0"]),
      }),
    ]);
    expect(change.gates[0]!.reason).toBe(
      "no_regression: 1 case(s) regressed against the baseline abcdef0: 'a turns[0].expect[0]' passed 5/5 → 0/5 (p = 0.004)",
    );
  });

  it("passes it on a drop without significance, saying what would settle it", () => {
    const change = judgeChange(side("head", gated, 4, 5), {
      side: side("base", gated, 5, 5),
      commit_sha: "abcdef0123",
    });
    expect(change.cases[0]).toMatchObject({ class: "inconclusive", more_repeats_to_settle: expect.any(Number) });
    expect(change.gates[0]).toMatchObject({ status: "passed" });
    expect(change.gates[0]!.reason).toMatch(
      /no case regressed .*1 dropped without significance .*more repeat\(s\) on each side would settle it/,
    );
  });

  it("passes it without a baseline, saying so, and compares nothing", () => {
    const change = judgeChange(side("head", gated, 0, 5), {
      side: null,
      why: "no baseline to compare with (none decided)",
    });
    expect(change.cases).toEqual([]);
    expect(change.gates).toEqual([
      {
        gate_id: "NOREG",
        status: "passed",
        reason: "no_regression: no baseline to compare with (none decided)",
        evidence_refs: [],
        baseline_refs: [],
      },
    ]);
  });

  it("covers only its requirement's cases beside another requirement", () => {
    const probesOnly = spec([
      { id: "SEC", require: { max_finding_severity: "low", no_regression: { max_drop: 0.05, confidence: 0.95 } } },
    ]);
    const change = judgeChange(side("head", probesOnly, 0, 5), {
      side: side("base", probesOnly, 5, 5),
      commit_sha: "abcdef0123",
    });
    expect(change.cases[0]).toMatchObject({ class: "regressed", gate_ids: [] });
    expect(change.gates[0]).toMatchObject({ gate_id: "SEC", status: "passed" });
  });

  it("merges the judgement into the run's gate, and sums the changes of all planned runs, regressions first", () => {
    const regressed = judgeChange(side("head", gated, 0, 5), {
      side: side("base", gated, 5, 5),
      commit_sha: "abcdef0123",
    });
    const [gate] = withChange(
      [
        {
          gate_id: "NOREG",
          status: "passed",
          reason: "no_regression is judged by the release decision, against the base branch's evidence",
          evidence_refs: [],
        },
      ],
      regressed,
    );
    expect(gate).toMatchObject({
      status: "failed",
      reason: regressed.gates[0]!.reason,
      baseline_evidence_refs: regressed.gates[0]!.baseline_refs,
    });
    const improved = judgeChange(side("head2", gated, 5, 5), {
      side: side("base2", gated, 0, 5),
      commit_sha: "abcdef0123",
    });
    const summary = summarizeChanges([improved, regressed]);
    expect(summary.counts).toMatchObject({ regressed: 1, improved: 1 });
    expect(summary.cases.map((c) => c.class)).toEqual(["regressed", "improved"]);
  });
});
