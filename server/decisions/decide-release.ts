import {
  EXECUTOR_GATE,
  POLICY_GATE,
  isTerminalRunStatus,
  RUN_GATE,
  evidencePath,
  runPath,
  type DecisionReason,
  type DecisionStatus,
  type PolicyChange,
  type Run,
} from "../contract/index.js";

/** A planned run as the decision sees it: what it waits for, and the run with its gates once there is one. */
export interface SlotFacts {
  test_spec_id: string;
  environment_id: string;
  /** Names the slot in a reason while it has no run, e.g. the spec's and environment's names. */
  label: string;
  /** What it waits for before its run can start (a deployment, the agent to be ready), and until when. */
  waiting: { for: string; until: string } | null;
  run:
    | (Pick<Run, "run_id" | "status" | "verdict" | "failure"> &
        Partial<Pick<Run, "executor" | "uploaded_by">> & {
          gates: {
            gate_id: string;
            /** quarantined: failed only on cases quarantined as flaky; it does not block. */
            status: "passed" | "failed" | "inconclusive" | "waived" | "quarantined";
            reason: string;
            evidence_refs: string[];
            /** For a gate judged against the base branch: the baseline's evidence. */
            baseline_evidence_refs?: string[];
          }[];
        })
    | null;
}

/** A waiver in force: it lifts one gate of one run. */
export interface WaiverFacts {
  /** null for the decision's own gate (`policy`). */
  run_id: string | null;
  gate_id: string;
  /** Its API path, cited as the reason's `waiver_ref`. */
  ref: string;
}

/** What the head removes or relaxes in the base branch's policy, and whether that needs an approval. */
export interface PolicyFacts {
  changes: readonly PolicyChange[];
  mode: "require_approval" | "report";
  /** Whether runs executed outside the service and uploaded count (the base branch's `executed_outside_service`). */
  executedOutsideService?: "allow" | "never";
}

const reasonOf = (
  reason: Omit<DecisionReason, "baseline_evidence_refs"> & { baseline_evidence_refs?: string[] | undefined },
): DecisionReason => ({
  ...reason,
  baseline_evidence_refs: reason.baseline_evidence_refs ?? [],
});

/**
 * The release decision over the planned runs of its current attempt, with the waivers in force, at
 * `now`. It fails closed: a missing or unfinished run keeps it PENDING; a failed or inconclusive
 * gate, a run that could not be judged, or a wait that outlasted its deadline blocks it unless a
 * waiver lifts it; nothing planned blocks it.
 */
export function decideRelease(
  slots: readonly SlotFacts[],
  waivers: readonly WaiverFacts[],
  now: string,
  policy: PolicyFacts = { changes: [], mode: "require_approval" },
): { status: DecisionStatus; reasons: DecisionReason[] } {
  if (slots.length === 0) {
    return {
      status: "BLOCKED",
      reasons: [
        reasonOf({
          run_id: null,
          gate_id: null,
          status: "untested",
          blocking: true,
          reason: "nothing was tested: no run was planned",
          evidence_refs: [],
          waiver_ref: null,
        }),
      ],
    };
  }
  const waiverOf = (runId: string | null, gateId: string) =>
    waivers.find((w) => w.run_id === runId && w.gate_id === gateId)?.ref ?? null;
  const reasons: DecisionReason[] = [];
  if (policy.changes.length > 0) reasons.push(policyReason(policy, waiverOf(null, POLICY_GATE)));
  for (const slot of slots) {
    const { run, waiting } = slot;
    if (!run && waiting && now >= waiting.until) {
      reasons.push(
        reasonOf({
          run_id: null,
          gate_id: null,
          status: "error",
          blocking: true,
          reason: `${slot.label}: gave up waiting for ${waiting.for} at ${waiting.until}; start the runs again once it is there`,
          evidence_refs: [],
          waiver_ref: null,
        }),
      );
      continue;
    }
    if (!run && waiting) {
      reasons.push(
        reasonOf({
          run_id: null,
          gate_id: null,
          status: "pending",
          blocking: true,
          reason: `${slot.label}: waiting for ${waiting.for} until ${waiting.until}`,
          evidence_refs: [],
          waiver_ref: null,
        }),
      );
      continue;
    }
    if (run?.executor === "local" && policy.executedOutsideService !== "allow") {
      reasons.push(
        reasonOf({
          run_id: run.run_id,
          gate_id: EXECUTOR_GATE,
          status: "failed",
          blocking: true,
          reason: `${slot.label}: the run was executed outside the service (uploaded by ${run.uploaded_by ?? "an API key"}) and does not count: the base branch's .assure/config.yml does not allow it (executed_outside_service: never)`,
          evidence_refs: [evidencePath(run.run_id)],
          waiver_ref: null,
        }),
      );
      continue;
    }
    if (!run || !isTerminalRunStatus(run.status)) {
      reasons.push(
        reasonOf({
          run_id: run?.run_id ?? null,
          gate_id: null,
          status: "pending",
          blocking: true,
          reason: run ? `${slot.label}: the run is ${run.status}` : `${slot.label}: waiting for its run`,
          evidence_refs: run ? [runPath(run.run_id)] : [],
          waiver_ref: null,
        }),
      );
      continue;
    }
    if (run.status === "FAILED") {
      const waiver = waiverOf(run.run_id, RUN_GATE);
      reasons.push(
        reasonOf({
          run_id: run.run_id,
          gate_id: RUN_GATE,
          status: waiver ? "waived" : "error",
          blocking: !waiver,
          reason: `${slot.label}: the run could not be judged (${run.failure?.cause}): ${run.failure?.message ?? ""}`,
          evidence_refs: [evidencePath(run.run_id)],
          waiver_ref: waiver,
        }),
      );
      continue;
    }
    for (const gate of run.gates) {
      const holds = gate.status !== "passed" && gate.status !== "quarantined";
      const lifted = holds ? waiverOf(run.run_id, gate.gate_id) : null;
      reasons.push(
        reasonOf({
          run_id: run.run_id,
          gate_id: gate.gate_id,
          status: lifted ? "waived" : gate.status,
          blocking: holds && !lifted,
          reason: gate.reason,
          evidence_refs: gate.evidence_refs,
          baseline_evidence_refs: gate.baseline_evidence_refs,
          waiver_ref: lifted,
        }),
      );
    }
  }
  const status: DecisionStatus = reasons.some((r) => r.status === "pending")
    ? "PENDING"
    : reasons.some((r) => r.blocking)
      ? "BLOCKED"
      : "ALLOWED";
  return { status, reasons };
}

/** The decision's own gate when the head changes the policy: it blocks until a writer approves (a waiver of `policy`). */
function policyReason(policy: PolicyFacts, waiver: string | null): DecisionReason {
  const listed = policy.changes
    .slice(0, 10)
    .map((change) => `${change.where}: ${change.message}`)
    .join("; ");
  const more = policy.changes.length > 10 ? `; and ${policy.changes.length - 10} more` : "";
  const what = `${policy.changes.length} policy change(s) to the base branch's .assure/: ${listed}${more}`;
  if (policy.mode === "report") {
    return reasonOf({
      run_id: null,
      gate_id: POLICY_GATE,
      status: "passed",
      blocking: false,
      reason: `${what} (reported only: policy_changes is 'report')`,
      evidence_refs: [],
      waiver_ref: null,
    });
  }
  return reasonOf({
    run_id: null,
    gate_id: POLICY_GATE,
    status: waiver ? "waived" : "failed",
    blocking: !waiver,
    reason: waiver ? `${what}: approved` : `${what}: a writer other than the author must approve them`,
    evidence_refs: [],
    waiver_ref: waiver,
  });
}
