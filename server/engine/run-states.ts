import type { FailureCause, RunStatus, Verdict } from "../contract/index.js";

/** Every legal move of a run. Terminal states have none: they never change. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  QUEUED: ["RUNNING", "FAILED"],
  RUNNING: ["EVALUATING", "FAILED"],
  EVALUATING: ["COMPLETED", "INCONCLUSIVE", "FAILED"],
  COMPLETED: [],
  INCONCLUSIVE: [],
  FAILED: [],
};

export class IllegalTransitionError extends Error {
  override name = "IllegalTransitionError";
}

export function isTerminal(status: RunStatus): boolean {
  return RUN_TRANSITIONS[status].length === 0;
}

export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!RUN_TRANSITIONS[from].includes(to)) {
    throw new IllegalTransitionError(`A run cannot move from ${from} to ${to}`);
  }
}

/**
 * What a failure means: whether trying again could help, and the verdict it carries. An agent
 * that broke the protocol was judged (FAIL); otherwise nothing was judged (ERROR).
 */
export const FAILURE_CAUSES: Readonly<Record<FailureCause, { retryable: boolean; verdict: Verdict }>> = {
  agent_contract_violation: { retryable: false, verdict: "FAIL" },
  target_unreachable: { retryable: true, verdict: "ERROR" },
  evaluator_unavailable: { retryable: true, verdict: "ERROR" },
  timeout: { retryable: true, verdict: "ERROR" },
  internal_error: { retryable: false, verdict: "ERROR" },
};

/** A run ends FAILED by throwing this from anywhere in its execution. */
export class RunFailedError extends Error {
  override name = "RunFailedError";
  constructor(
    readonly failureCause: FailureCause,
    message: string,
    readonly evidence?: Record<string, unknown>,
  ) {
    super(message);
  }
}
