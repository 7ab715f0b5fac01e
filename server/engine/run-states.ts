import { TERMINAL_RUN_STATUSES, isTerminalRunStatus, type RunStatus } from "../contract/index.js";

/** Every legal move of a run. Terminal states have none: they never change. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  QUEUED: ["RUNNING", "FAILED"],
  RUNNING: ["EVALUATING", "FAILED"],
  EVALUATING: TERMINAL_RUN_STATUSES,
  COMPLETED: [],
  INCONCLUSIVE: [],
  FAILED: [],
};

export class IllegalTransitionError extends Error {
  override name = "IllegalTransitionError";
}

export const isTerminal: (status: RunStatus) => boolean = isTerminalRunStatus;

export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!RUN_TRANSITIONS[from].includes(to)) {
    throw new IllegalTransitionError(`A run cannot move from ${from} to ${to}`);
  }
}
