import type { ProbotOctokit } from "probot";
import type { GitHubCommit } from "../../server/store/github.js";
import { repositoryRef } from "../repository/files.js";
import type { CommitToGate } from "./commit-to-gate.js";

/** What an event (or an API request) says of a commit to gate; the rest is asked of GitHub. */
export interface CommitHint {
  installationId: number;
  repository: { id: number; full_name: string; default_branch?: string | undefined };
  headSha: string;
  /** The branch the event names (`refs/heads/…` stripped); null when it names none (a fork's check suite); undefined when it cannot say (an API request). */
  branch: string | null | undefined;
  /** The pull request a `pull_request` event is about: then GitHub need not be asked. */
  pullRequest?: { number: number; baseSha: string; baseRef: string; fork: boolean } | undefined;
  rerun: boolean;
}

type Octokit = Pick<ProbotOctokit, "rest">;

const isFork = (pull: { head: { repo: { id: number } | null } }, repositoryId: number) =>
  pull.head.repo?.id !== repositoryId;

/**
 * The commit as GitHub knows it, whatever event named it first: the head of which open pull
 * request (its base, and whether it comes from a fork), or else a commit of the default branch (no
 * base: it becomes a baseline), of another branch of the repository (judged against the default
 * branch until a pull request says otherwise), or of no branch at all — a fork's head, held by the
 * fork policy until GitHub lists the pull request that brings it. An earlier record of the commit
 * breaks ties between pull requests, and a commit once seen as a fork's stays one.
 */
export async function resolveCommit(
  octokit: Octokit,
  hint: CommitHint,
  known: GitHubCommit | undefined,
): Promise<CommitToGate> {
  const repository = repositoryRef(hint.repository.full_name);
  const { installationId, headSha, rerun } = hint;
  const commit = {
    installationId,
    repository: { id: hint.repository.id, full_name: hint.repository.full_name },
    headSha,
    rerun,
  };
  const stickyFork = known?.fork === true;
  const defaultBranchOf = async () =>
    hint.repository.default_branch ?? (await octokit.rest.repos.get({ ...repository })).data.default_branch;
  // Into another branch than the default one, the default branch's policy holds: a pull request does not choose its own.
  const policyOf = async (baseRef: string) => {
    const defaultBranch = await defaultBranchOf();
    return baseRef === defaultBranch ? null : await tipOf(octokit, repository, defaultBranch);
  };
  if (hint.pullRequest) {
    const { number, baseSha, baseRef, fork } = hint.pullRequest;
    return {
      ...commit,
      baseSha,
      policySha: await policyOf(baseRef),
      ref: hint.branch ? `refs/heads/${hint.branch}` : null,
      pullRequest: number,
      fork: stickyFork || fork,
    };
  }
  if (
    hint.branch !== undefined &&
    hint.branch !== null &&
    hint.branch === hint.repository.default_branch &&
    !stickyFork
  ) {
    return { ...commit, baseSha: null, ref: `refs/heads/${hint.branch}`, pullRequest: null, fork: false };
  }

  const { data: pulls } = await octokit.rest.repos.listPullRequestsAssociatedWithCommit({
    ...repository,
    commit_sha: headSha,
    per_page: 100,
  });
  const heads = pulls
    .filter((pull) => pull.state === "open" && pull.head.sha === headSha)
    .sort((a, b) => a.number - b.number);
  const pull = heads.find((p) => p.number === known?.pull_request) ?? heads[0];
  if (pull) {
    return {
      ...commit,
      baseSha: pull.base.sha,
      policySha: await policyOf(pull.base.ref),
      ref: `refs/heads/${pull.head.ref}`,
      pullRequest: pull.number,
      fork: stickyFork || isFork(pull, hint.repository.id),
    };
  }

  const defaultBranch = await defaultBranchOf();
  const branch =
    hint.branch ?? (hint.branch === null ? null : await branchOf(octokit, repository, headSha, defaultBranch));
  if (branch === defaultBranch && !stickyFork) {
    return { ...commit, baseSha: null, ref: `refs/heads/${branch}`, pullRequest: null, fork: false };
  }
  // Judged against the default branch's tip: its config is the policy of a commit no pull request names.
  return {
    ...commit,
    baseSha: await tipOf(octokit, repository, defaultBranch),
    ref: branch ? `refs/heads/${branch}` : null,
    pullRequest: null,
    fork: stickyFork || branch === null,
  };
}

/** The commit at a branch's tip; null when the branch does not exist (a repository with no commits yet). */
async function tipOf(
  octokit: Octokit,
  repository: { owner: string; repo: string },
  branch: string,
): Promise<string | null> {
  try {
    return (await octokit.rest.repos.getBranch({ ...repository, branch })).data.commit.sha;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

/**
 * Which branch of the repository holds a commit no event named a branch for: the default branch
 * when the commit is in its history, else one whose head it is; null when none does (a fork's).
 */
async function branchOf(
  octokit: Octokit,
  repository: { owner: string; repo: string },
  sha: string,
  defaultBranch: string,
): Promise<string | null> {
  try {
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
      ...repository,
      basehead: `${defaultBranch}...${sha}`,
      per_page: 1,
    });
    if (data.status === "identical" || data.status === "behind") return defaultBranch;
  } catch (error) {
    if ((error as { status?: number }).status !== 404) throw error;
  }
  const { data: branches } = await octokit.rest.repos.listBranchesForHeadCommit({ ...repository, commit_sha: sha });
  return branches[0]?.name ?? null;
}
