import {
  EXECUTOR_GATE,
  POLICY_GATE,
  RUN_GATE,
  type PolicyApproval,
  type CreateWaiverBody,
  type ReleaseDecision,
  type Waiver,
} from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { DecisionDeps } from "./create-decision.js";

export interface WaiverAuthor {
  key_id: string | null;
  github_login: string | null;
}

/**
 * Lets one gate of one run of the decision through, for a reason, maybe until a time. The gate
 * must be one that blocks (failed or inconclusive, or `run` for a run that could not be judged).
 */
export async function waiveGate(
  deps: DecisionDeps,
  decision: ReleaseDecision,
  body: CreateWaiverBody,
  author: WaiverAuthor,
): Promise<Waiver> {
  if (body.gate_id === EXECUTOR_GATE) {
    throw new ApiError("NOT_WAIVABLE", {
      message: `'${EXECUTOR_GATE}' says a run executed outside the service does not count here: only the base branch's policy (executed_outside_service) lets it count.`,
      details: [{ path: "body.gate_id", message: "a gate of the run" }],
    });
  }
  if (body.gate_id === POLICY_GATE) {
    throw new ApiError("NOT_WAIVABLE", {
      message: `'${POLICY_GATE}' is the decision's own gate (the head's policy changes): approve them with POST ${decision.links.self}/policy-approvals.`,
      details: [{ path: "body.gate_id", message: "a gate of the run" }],
    });
  }
  const reason = decision.reasons.find((r) => r.run_id === body.run_id && r.gate_id === body.gate_id);
  if (!decision.runs.some((run) => run.run_id === body.run_id)) {
    throw new ApiError("NOT_WAIVABLE", {
      message: `Run '${body.run_id}' is not one this decision rests on.`,
      details: [{ path: "body.run_id", message: "a run of the decision" }],
    });
  }
  if (!reason || reason.status === "passed") {
    throw new ApiError("NOT_WAIVABLE", {
      message: `Gate '${body.gate_id}' of run '${body.run_id}' does not block the decision: there is nothing to waive.`,
      details: [
        {
          path: "body.gate_id",
          message: `a failed or inconclusive gate of the run, or '${RUN_GATE}' for a run that could not be judged`,
        },
      ],
    });
  }
  const now = deps.clock.now();
  if (body.expires_at !== undefined && Date.parse(body.expires_at) <= now.getTime()) {
    throw new ApiError("NOT_WAIVABLE", {
      message: "The waiver would have expired already.",
      details: [{ path: "body.expires_at", message: "a time in the future" }],
    });
  }
  const [waiver] = await deps.store.write([
    "addWaiver",
    {
      waiver_id: deps.newId("waiver"),
      decision_id: decision.decision_id,
      run_id: body.run_id,
      gate_id: body.gate_id,
      reason: body.reason,
      expires_at: body.expires_at === undefined ? null : new Date(body.expires_at).toISOString(),
      created_by: author,
    },
    now.toISOString(),
  ]);
  return waiver;
}

/** Takes a waiver back, with a record (and reason) of its own: 409 if it was taken back already. */
export async function revokeWaiver(
  deps: DecisionDeps,
  waiver: Waiver,
  reason: string,
  author: WaiverAuthor,
): Promise<Waiver> {
  if (waiver.revokes !== null) {
    throw new ApiError("CONFLICT", {
      message: "This record is itself a revocation.",
      details: [{ path: "waiver_id", message: "a waiver" }],
    });
  }
  const [revocation] = await deps.store.write([
    "revokeWaiver",
    {
      waiver_id: deps.newId("waiver"),
      decision_id: waiver.decision_id,
      revokes: waiver.waiver_id,
      reason,
      created_by: author,
    },
    deps.clock.now().toISOString(),
  ]);
  if (!revocation) throw new ApiError("CONFLICT", { message: `Waiver '${waiver.waiver_id}' was revoked already.` });
  return revocation;
}

/**
 * Approves what the decision's head removes or relaxes in the base branch's policy: it lifts the
 * decision's gate `policy`. 422 when nothing needs approving; 409 when it is approved already.
 */
export async function approvePolicy(
  deps: DecisionDeps,
  decision: ReleaseDecision,
  reason: string,
  author: WaiverAuthor,
): Promise<PolicyApproval> {
  const policy = decision.reasons.find((r) => r.gate_id === POLICY_GATE && r.run_id === null);
  if (!policy || (policy.status !== "failed" && policy.status !== "waived")) {
    throw new ApiError("NOTHING_TO_APPROVE", {
      message: "The decision's head changes no policy that needs an approval: there is nothing to approve.",
      details: [{ path: "decision_id", message: "a decision whose gate 'policy' blocks it" }],
    });
  }
  if (policy.status === "waived") {
    throw new ApiError("CONFLICT", { message: "The decision's policy changes are approved already." });
  }
  const [approval] = await deps.store.write([
    "approvePolicy",
    { approval_id: deps.newId("approval"), decision_id: decision.decision_id, reason, created_by: author },
    deps.clock.now().toISOString(),
  ]);
  return approval;
}
