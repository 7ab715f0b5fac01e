import { context } from "@actions/github";

/** The commit this step gates, as the workflow's event names it. */
export interface GatedCommit {
  repository: { id: number; full_name: string };
  /** The pull request's head on pull_request events (never the merge commit GITHUB_SHA names), else GITHUB_SHA. */
  sha: string;
  /** The pull request's base commit (its branch's head when the event fired); undefined on push. */
  baseSha: string | undefined;
  /** `refs/heads/<branch>` of the head: what the App records too. */
  ref: string | undefined;
  pullRequest: number | undefined;
  /** A pull request whose head repository is not the base: it gets no OIDC token. */
  fork: boolean;
}

interface PullRequestPayload {
  number: number;
  head: { sha: string; ref: string; repo?: { id: number } | null };
  base: { sha: string; repo: { id: number } };
}

export function gatedCommit(): GatedCommit {
  const repository = context.payload.repository as { id: number; full_name: string } | undefined;
  if (!repository) {
    throw new Error(`The ${context.eventName} event names no repository: run this Action on pull_request or push.`);
  }
  const pr = context.payload.pull_request as PullRequestPayload | undefined;
  if (pr) {
    return {
      repository: { id: repository.id, full_name: repository.full_name },
      sha: pr.head.sha,
      baseSha: pr.base.sha,
      ref: `refs/heads/${pr.head.ref}`,
      pullRequest: pr.number,
      fork: pr.head.repo?.id !== pr.base.repo.id,
    };
  }
  return {
    repository: { id: repository.id, full_name: repository.full_name },
    sha: context.sha,
    baseSha: undefined,
    ref: context.ref.startsWith("refs/heads/") ? context.ref : undefined,
    pullRequest: undefined,
    fork: false,
  };
}
