import { POLICY_GATE, type DecisionReason, type DecisionStatus } from "../../server/contract/index.js";

export type CheckStatus = "queued" | "in_progress" | "completed";
export type CheckConclusion = "success" | "failure" | "action_required";

/** What a check run shows for what the App knows of a commit. */
export type GateState =
  | { kind: "decision"; status: DecisionStatus; reasons: readonly DecisionReason[] }
  /** The commit is not gated now: something is wrong (failure), or a person must act first (action_required). */
  | { kind: "problem"; conclusion: CheckConclusion };

/**
 * The check run's status and conclusion, in one table. A required check passes on success (and on
 * neutral or skipped, which are never used): an INCONCLUSIVE or ERROR outcome must block, so it is
 * action_required — a person must look — and a failed gate is a failure.
 *
 * | state                                        | status      | conclusion      |
 * |----------------------------------------------|-------------|-----------------|
 * | PENDING, no run started yet                  | queued      | —               |
 * | PENDING, a run started                       | in_progress | —               |
 * | ALLOWED                                      | completed   | success         |
 * | BLOCKED by a failed gate (or nothing tested) | completed   | failure         |
 * | BLOCKED only by inconclusive, error, or      | completed   | action_required |
 * |   policy changes waiting for an approval     |             |                 |
 * | could not be gated                           | completed   | failure         |
 * | waits for a person (a fork's approval)       | completed   | action_required |
 */
export function toCheckState(state: GateState): { status: CheckStatus; conclusion: CheckConclusion | null } {
  if (state.kind === "problem") return { status: "completed", conclusion: state.conclusion };
  switch (state.status) {
    case "PENDING": {
      const started = state.reasons.some((r) => r.run_id !== null);
      return { status: started ? "in_progress" : "queued", conclusion: null };
    }
    case "ALLOWED":
      return { status: "completed", conclusion: "success" };
    case "BLOCKED": {
      const blocking = state.reasons.filter((r) => r.blocking);
      const awaitsApproval = (r: DecisionReason) => r.run_id === null && r.gate_id === POLICY_GATE;
      const failed = blocking.some((r) => (r.status === "failed" && !awaitsApproval(r)) || r.status === "untested");
      return { status: "completed", conclusion: failed ? "failure" : "action_required" };
    }
  }
}
