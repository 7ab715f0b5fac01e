import { describe, expect, it } from "@jest/globals";
import { toCheckState } from "../../../app/checks/conclusion.js";
import type { DecisionReason } from "../../../server/contract/index.js";

const reason = (status: DecisionReason["status"], run_id: string | null = "run_1"): DecisionReason => ({
  run_id,
  gate_id: "G",
  status,
  blocking: !["passed", "waived"].includes(status),
  reason: "",
  evidence_refs: [],
  baseline_evidence_refs: [],
  waiver_ref: null,
});

describe("check run status and conclusion", () => {
  it.each([
    ["PENDING with no run started", "PENDING", [reason("pending", null)], { status: "queued", conclusion: null }],
    ["PENDING with a run started", "PENDING", [reason("pending")], { status: "in_progress", conclusion: null }],
    ["ALLOWED", "ALLOWED", [reason("passed"), reason("waived")], { status: "completed", conclusion: "success" }],
    [
      "BLOCKED by a failed gate",
      "BLOCKED",
      [reason("failed"), reason("inconclusive")],
      { status: "completed", conclusion: "failure" },
    ],
    [
      "BLOCKED because nothing was tested",
      "BLOCKED",
      [reason("untested", null)],
      { status: "completed", conclusion: "failure" },
    ],
    [
      "BLOCKED only by an inconclusive gate",
      "BLOCKED",
      [reason("passed"), reason("inconclusive")],
      { status: "completed", conclusion: "action_required" },
    ],
    [
      "BLOCKED only by a run that could not be judged",
      "BLOCKED",
      [reason("error")],
      { status: "completed", conclusion: "action_required" },
    ],
    [
      "BLOCKED by an inconclusive gate, a failed one waived",
      "BLOCKED",
      [reason("waived"), reason("inconclusive")],
      { status: "completed", conclusion: "action_required" },
    ],
  ] as const)("%s", (_name, status, reasons, expected) => {
    expect(toCheckState({ kind: "decision", status, reasons })).toEqual(expected);
  });

  it("completes a commit that is not gated now: failure when something is wrong, action_required when a person must act", () => {
    expect(toCheckState({ kind: "problem", conclusion: "failure" })).toEqual({
      status: "completed",
      conclusion: "failure",
    });
    expect(toCheckState({ kind: "problem", conclusion: "action_required" })).toEqual({
      status: "completed",
      conclusion: "action_required",
    });
  });

  it("never answers neutral or skipped, which a required check lets through", () => {
    const conclusions = ["PENDING", "ALLOWED", "BLOCKED"].flatMap((status) =>
      (["passed", "failed", "inconclusive", "waived", "error", "pending", "untested"] as const).map(
        (r) => toCheckState({ kind: "decision", status: status as "BLOCKED", reasons: [reason(r)] }).conclusion,
      ),
    );
    expect(conclusions).not.toContain("neutral");
    expect(conclusions).not.toContain("skipped");
  });
});
