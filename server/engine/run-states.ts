import type { RunStatus } from "../contract/index.js";

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
