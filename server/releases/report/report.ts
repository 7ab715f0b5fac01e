import type { Evaluation, Evidence, Finding, PolicyApproval, ReleaseDecision } from "../../contract/index.js";
import type { Failure } from "./failures.js";

/** One planned run as a report shows it: its evidence, where its spec is, and what it did not meet. */
export interface RunReport {
  evidence: Evidence;
  specName: string;
  /** The spec's file in the repository, and the line of each part evaluations cite. */
  specPath: string | null;
  lines: Record<string, number>;
  environmentName: string;
  /** Its failed, inconclusive and errored evaluations, in the order they were made. */
  unmet: Evaluation[];
  /** Its checks that did not pass, by case, with the agent's words (`listFailures`). */
  failures: Failure[];
  findings: Finding[];
}

/**
 * A release decision as people read it — in a check run (the App) or a job summary (the Action):
 * the decision, its planned runs' evidence, and who approved a fork's runs, if someone had to.
 */
export interface DecisionReport {
  decision: ReleaseDecision;
  runs: RunReport[];
  approval: { login: string; permission: string; pressed_at: string } | null;
  /** Who approved the head's policy changes, and the presses of "Approve policy" that were refused. */
  policy?: { approvals: PolicyApproval[]; refused: { login: string; refusal: string; pressed_at: string }[] };
}

/** Evaluations a report lists: the ones that did not pass. */
export const UNMET_STATUSES: ReadonlySet<string> = new Set(["failed", "inconclusive", "errored"]);
