import type { CaseEvaluation } from "../../server/changes/compare-cases.js";

/** `passes` passed and `fails` failed evaluations of the example's refund check, one per conversation, as a run stores them. */
export function refundChecks(passes: number, fails: number): CaseEvaluation[] {
  let conversation = 0;
  const one = (status: "passed" | "failed"): CaseEvaluation => ({
    kind: "expectation",
    metric_id: "expect.tool_called",
    scenario_id: "full-refund",
    conversation_id: `cnv_${++conversation}`,
    turn: 2,
    spec_path: "scenarios[0].turns[1].expect[0]",
    status,
    score: status === "passed" ? 1 : 0,
  });
  return [
    ...Array.from({ length: passes }, () => one("passed")),
    ...Array.from({ length: fails }, () => one("failed")),
  ];
}
