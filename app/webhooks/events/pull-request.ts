import type { GateDeps } from "../../gate/commit-to-gate.js";
import type { Delivery, GitHubPayload } from "./github-event.js";
import { gateNamedCommit, hintOf } from "./gate-named-commit.js";

/**
 * A pull request opened, pushed to or reopened, or whose base changed (edited): its head is gated,
 * judged against its base. Only a pull request's events say for sure what its base is and whether
 * it comes from a fork.
 */
export async function gatePullRequestHead<
  Name extends "pull_request.opened" | "pull_request.synchronize" | "pull_request.reopened" | "pull_request.edited",
>(deps: GateDeps, payload: GitHubPayload<Name>, { what }: Delivery): Promise<void> {
  const base = hintOf(payload);
  // An edit other than of its base changes nothing the gate reads.
  const asked = payload.action !== "edited" || payload.changes?.base !== undefined;
  const pr = payload.pull_request;
  if (!base || !asked || !pr) return gateNamedCommit(deps, what, undefined);
  // A fork's head lives in another repository (null once the fork is deleted).
  const fork = pr.head.repo?.id !== base.repository.id;
  await gateNamedCommit(deps, what, {
    ...base,
    headSha: pr.head.sha,
    branch: pr.head.ref,
    pullRequest: { number: pr.number, baseSha: pr.base.sha, baseRef: pr.base.ref, fork },
    rerun: false,
  });
}
