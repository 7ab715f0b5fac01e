import type { GateDeps } from "../../gate/commit-to-gate.js";
import type { Delivery, GitHubPayload } from "./github-event.js";
import { gateNamedCommit, hintOf } from "./gate-named-commit.js";

/** A check suite requested (a push GitHub tells the App of), or re-requested (a new attempt): its head is gated. */
export async function gateCheckSuite<Name extends "check_suite.requested" | "check_suite.rerequested">(
  deps: GateDeps,
  payload: GitHubPayload<Name>,
  { what }: Delivery,
): Promise<void> {
  const base = hintOf(payload);
  const suite = payload.check_suite;
  // A fork's head comes with head_branch null (and no pull requests listed): GitHub is asked which pull request brings it.
  await gateNamedCommit(
    deps,
    what,
    base && suite
      ? { ...base, headSha: suite.head_sha, branch: suite.head_branch, rerun: payload.action === "rerequested" }
      : undefined,
  );
}
