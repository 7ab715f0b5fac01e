import { describe, expect, it } from "@jest/globals";
import { exitCodeOf } from "../../../../app/cli/test/exit-code.js";
import type { DecisionReason, ReleaseDecision } from "../../../../server/contract/index.js";

const reason = (status: DecisionReason["status"]): DecisionReason => ({
  run_id: "run_1",
  gate_id: "G",
  status,
  blocking: !["passed", "waived"].includes(status),
  reason: "",
  evidence_refs: [],
  baseline_evidence_refs: [],
  waiver_ref: null,
});
const decision = (status: ReleaseDecision["status"], reasons: DecisionReason[]) =>
  ({ status, reasons }) as unknown as ReleaseDecision;

describe("assure test's exit code", () => {
  it.each([
    ["allowed", decision("ALLOWED", [reason("passed")]), { blocked: 0, failed: 0, never: 0 }],
    [
      "blocked by a failed gate",
      decision("BLOCKED", [reason("failed"), reason("inconclusive")]),
      { blocked: 1, failed: 1, never: 0 },
    ],
    [
      "blocked only by an inconclusive gate",
      decision("BLOCKED", [reason("passed"), reason("inconclusive")]),
      { blocked: 2, failed: 0, never: 0 },
    ],
    [
      "blocked only by a run that could not be judged",
      decision("BLOCKED", [reason("error")]),
      { blocked: 2, failed: 0, never: 0 },
    ],
  ] as const)("is as the App's check run concludes: %s", (_, decided, byFailOn) => {
    expect({
      blocked: exitCodeOf(decided, "blocked"),
      failed: exitCodeOf(decided, "failed"),
      never: exitCodeOf(decided, "never"),
    }).toEqual(byFailOn);
  });
});
