/**
 * The buttons a completed check run offers, by identifier (GitHub: label ≤ 20 characters,
 * description ≤ 40, identifier ≤ 20). A `requested_action` delivery names one of these.
 */
export const CHECK_RUN_BUTTONS = {
  /** Runs the commit's specs again (a writer). */
  rerun: { label: "Re-run", description: "Run this commit's specs again", identifier: "rerun" },
  /** Lets a fork's runs start (a writer). */
  approve: { label: "Approve and run", description: "Run a fork's specs (write access)", identifier: "approve" },
  /** Approves what a pull request's head changes in the base branch's policy (a writer, not its author). */
  "approve-policy": {
    label: "Approve policy",
    description: "Accept its .assure/ changes (a writer)",
    identifier: "approve-policy",
  },
} as const;

export type CheckRunButton = keyof typeof CHECK_RUN_BUTTONS;

/** The button a `requested_action` names, if it is one of ours. */
export const buttonNamed = (identifier: string | undefined): CheckRunButton | undefined =>
  identifier !== undefined && Object.hasOwn(CHECK_RUN_BUTTONS, identifier) ? (identifier as CheckRunButton) : undefined;
