import { POLICY_GATE } from "../../../server/contract/index.js";
import { approvePolicy } from "../../../server/releases/waive.js";
import type { CommitToGate, GateDeps } from "../../gate/commit-to-gate.js";
import { repositoryRef } from "../../repository/files.js";

/**
 * "Approve policy" on a pull request's check run: honoured when the sender may write to the
 * repository and is not the pull request's author (a change must not approve its own weakening of
 * the gate); then the decision records who approved. A refused press is kept, and shown.
 */
export async function pressApprovePolicy(
  deps: GateDeps,
  {
    commit,
    sender,
    permission,
    deliveryId,
  }: { commit: CommitToGate; sender: string; permission: string; deliveryId: string },
): Promise<void> {
  const [gated] = await deps.store.listGitHubCommitsOfSha(commit.repository.id, commit.headSha);
  const decision = gated?.decision_id ? await deps.store.getDecision(gated.decision_id) : undefined;
  const policy = decision?.reasons.find((r) => r.gate_id === POLICY_GATE && r.run_id === null);
  if (!decision || !commit.pullRequest || policy?.status !== "failed") {
    deps.log.info(
      `${sender} pressed Approve policy on ${commit.repository.full_name}@${commit.headSha.slice(0, 7)}: nothing to approve`,
    );
    return;
  }
  const author = await pullRequestAuthor(deps, commit);
  const committers = await pullRequestCommitters(deps, commit);
  const refusal =
    permission !== "admin" && permission !== "write"
      ? `has ${permission} access (approving needs write)`
      : sender === author
        ? "is the pull request's author (someone else must approve its policy changes)"
        : committers.has(sender)
          ? "wrote or committed commits of the pull request (someone else must approve its policy changes)"
          : null;
  const press = {
    repository_id: commit.repository.id,
    head_sha: commit.headSha,
    login: sender,
    permission,
    granted: !refusal,
    pressed_at: deps.clock.now().toISOString(),
    delivery_id: deliveryId,
  };
  await deps.store.write(["recordApprovalPress", { ...press, action: "approve-policy", refusal }]);
  if (refusal) {
    deps.log.warn(
      `${sender} pressed Approve policy on ${commit.repository.full_name}#${commit.pullRequest} but ${refusal}: refused`,
    );
    return;
  }
  await approvePolicy(
    deps,
    decision,
    `approved on GitHub by @${sender} (${permission} access) with the check run's button`,
    { key_id: null, github_login: sender },
  );
  deps.log.info(`${sender} approved the policy changes of ${commit.repository.full_name}#${commit.pullRequest}`);
}

async function pullRequestAuthor(deps: GateDeps, commit: CommitToGate): Promise<string | undefined> {
  const octokit = await deps.octokitFor(commit.installationId);
  const { data } = await octokit.rest.pulls.get({
    ...repositoryRef(commit.repository.full_name),
    pull_number: commit.pullRequest!,
  });
  return data.user?.login;
}

/** Who wrote or committed the pull request's commits (GitHub users): none of them may approve its policy changes. */
async function pullRequestCommitters(deps: GateDeps, commit: CommitToGate): Promise<Set<string>> {
  const octokit = await deps.octokitFor(commit.installationId);
  const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
    ...repositoryRef(commit.repository.full_name),
    pull_number: commit.pullRequest!,
    per_page: 100,
  });
  return new Set(
    commits.flatMap((c) => [c.author?.login, c.committer?.login]).filter((login): login is string => Boolean(login)),
  );
}
