import { buttonNamed } from "../checks/buttons.js";
import type { CommitHint } from "../gate/resolve-commit.js";

/** The parts of webhook payloads the App reads (GitHub's payloads hold much more). */
interface Payload {
  action?: string;
  installation?: { id: number };
  repository?: { id: number; full_name: string; default_branch?: string };
  pull_request?: {
    number: number;
    head: { sha: string; ref: string; repo?: { id: number } | null };
    base: { sha: string; ref: string };
  };
  changes?: { base?: unknown };
  ref?: string;
  after?: string;
  deleted?: boolean;
  check_suite?: { head_sha: string; head_branch: string | null };
  check_run?: { name: string; head_sha: string; check_suite?: { head_branch: string | null } };
  requested_action?: { identifier: string };
}

/**
 * Which commit a delivery asks the App to gate, with what the event says of it, and whether to
 * start its runs again; undefined for events the App only acknowledges. Only a pull request's
 * events say for sure what its base is and whether it comes from a fork: for the others the App
 * asks GitHub (resolveCommit), so that the order events come in changes nothing. Pull requests
 * (opened, synchronize, reopened) and check suites gate the head; pushes gate commits of the
 * default branch, so that each merged commit has a decision; a re-run (GitHub's, or the check
 * run's button) starts a new attempt.
 */
export function commitOfEvent(
  event: string,
  payload: Payload,
  isOurCheck: (name: string) => boolean,
): CommitHint | undefined {
  const { installation, repository, action } = payload;
  if (!installation || !repository) return undefined;
  const base = {
    installationId: installation.id,
    repository: { id: repository.id, full_name: repository.full_name, default_branch: repository.default_branch },
  };

  // A pull request's base changed (edited) is a new base to judge its head against.
  const baseChanged = action === "edited" && payload.changes?.base !== undefined;
  if (
    event === "pull_request" &&
    (["opened", "synchronize", "reopened"].includes(action ?? "") || baseChanged) &&
    payload.pull_request
  ) {
    const pr = payload.pull_request;
    // A fork's head lives in another repository (null once the fork is deleted).
    const fork = pr.head.repo?.id !== repository.id;
    return {
      ...base,
      headSha: pr.head.sha,
      branch: pr.head.ref,
      pullRequest: { number: pr.number, baseSha: pr.base.sha, baseRef: pr.base.ref, fork },
      rerun: false,
    };
  }
  if (
    event === "push" &&
    payload.after &&
    !payload.deleted &&
    payload.ref === `refs/heads/${repository.default_branch}`
  ) {
    return { ...base, headSha: payload.after, branch: repository.default_branch, rerun: false };
  }
  if (event === "check_suite" && (action === "requested" || action === "rerequested") && payload.check_suite) {
    const suite = payload.check_suite;
    // A fork's head comes with head_branch null (and no pull requests listed): GitHub is asked which pull request brings it.
    return { ...base, headSha: suite.head_sha, branch: suite.head_branch, rerun: action === "rerequested" };
  }
  const button = action === "requested_action" ? buttonNamed(payload.requested_action?.identifier) : undefined;
  const acted = action === "rerequested" || button !== undefined;
  if (event === "check_run" && acted && payload.check_run && isOurCheck(payload.check_run.name)) {
    const run = payload.check_run;
    return {
      ...base,
      headSha: run.head_sha,
      branch: run.check_suite?.head_branch ?? null,
      // Approving a fork's runs starts them for the first time, approving a policy change starts
      // nothing; a re-run starts them again.
      rerun: button !== "approve" && button !== "approve-policy",
    };
  }
  return undefined;
}
