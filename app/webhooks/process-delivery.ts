import { z } from "zod";
import { defineTask } from "../../server/engine/define-task.js";
import type { Task } from "../../server/engine/worker.js";
import type { CommitToGate, GateDeps } from "../gate/commit-to-gate.js";
import { gateCommit } from "../gate/gate-commit.js";
import { repositoryRef } from "../repository/files.js";
import { buttonNamed } from "../checks/buttons.js";
import { commitOfEvent } from "./commit-of-event.js";
import { resolveCommit } from "../gate/resolve-commit.js";
import { approvePolicy } from "../../server/releases/waive.js";
import { POLICY_GATE } from "../../server/contract/index.js";

/** The job of a delivery, after GitHub was answered: gate the commit it names, if it names one. */
export function makeProcessDelivery(deps: GateDeps): Task {
  return defineTask(z.object({ delivery_id: z.string() }), async function processDelivery({ delivery_id }) {
    const delivery = deps.store.getDelivery(delivery_id);
    if (!delivery) return;
    const body = JSON.parse(delivery.payload) as Parameters<typeof commitOfEvent>[1];
    if (delivery.event === "deployment_status") {
      return recordDeployment(deps, body as DeploymentStatusPayload, delivery.delivery_id);
    }
    const isOurCheck = (name: string) =>
      body.repository !== undefined &&
      body.check_run !== undefined &&
      deps.store
        .listGitHubCommitsOfSha(body.repository.id, body.check_run.head_sha)
        .some((commit) => commit.check_name === name);
    const named = commitOfEvent(delivery.event, body, isOurCheck);
    const what = `${delivery.event}${delivery.action ? `.${delivery.action}` : ""} (delivery ${delivery.delivery_id})`;
    if (!named) {
      deps.log.info(`Received ${what}: nothing to gate`);
      return;
    }
    const [known] = deps.store.listGitHubCommitsOfSha(named.repository.id, named.headSha);
    const commit = await resolveCommit(await deps.octokitFor(named.installationId), named, known);
    // A button on a check run can be pressed by anyone who sees it: only a writer may start runs.
    if (delivery.action === "requested_action") {
      const sender = (body as { sender?: { login?: string } }).sender?.login ?? "";
      const permission = await permissionOf(deps, commit, sender);
      const granted = permission === "admin" || permission === "write";
      const button = buttonNamed((body as { requested_action?: { identifier?: string } }).requested_action?.identifier);
      if (button === "approve-policy") {
        await pressApprovePolicy(deps, commit, sender, permission, delivery.delivery_id);
      } else if (button === "approve") {
        // Kept either way: a refused press is shown on the check run, a granted one lets the fork's runs start.
        await deps.store.write([
          "recordApprovalPress",
          {
            repository_id: commit.repository.id,
            head_sha: commit.headSha,
            login: sender,
            permission,
            granted,
            pressed_at: deps.clock.now().toISOString(),
            delivery_id: delivery.delivery_id,
            action: "approve",
            refusal: granted ? null : `has ${permission} access`,
          },
        ]);
        deps.log.info(
          `Received ${what}: ${sender} (${permission}) ${granted ? "approved" : "may not approve"} the fork's runs of ${commit.repository.full_name}@${commit.headSha.slice(0, 7)}`,
        );
      } else if (!granted) {
        deps.log.warn(
          `Received ${what}: ${sender} (${permission}) may not start runs again in ${commit.repository.full_name}; ignored`,
        );
        return;
      }
    }
    deps.log.info(
      `Received ${what}: gating ${commit.repository.full_name}@${commit.headSha.slice(0, 7)}${commit.rerun ? " again" : ""}`,
    );
    await gateCommit(deps, commit);
  });
}

/**
 * "Approve policy" on a pull request's check run: honoured when the sender may write to the
 * repository and is not the pull request's author (a change must not approve its own weakening of
 * the gate); then the decision records who approved. A refused press is kept, and shown.
 */
async function pressApprovePolicy(
  deps: GateDeps,
  commit: CommitToGate,
  sender: string,
  permission: string,
  deliveryId: string,
): Promise<void> {
  const [gated] = deps.store.listGitHubCommitsOfSha(commit.repository.id, commit.headSha);
  const decision = gated?.decision_id ? deps.store.getDecision(gated.decision_id) : undefined;
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

/** A user's permission on the repository, as GitHub says it (maintain counts as write); none if GitHub does not know them. */
async function permissionOf(deps: GateDeps, commit: CommitToGate, username: string): Promise<string> {
  if (!username) return "none";
  const octokit = await deps.octokitFor(commit.installationId);
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({
      ...repositoryRef(commit.repository.full_name),
      username,
    });
    return data.permission;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return "none";
    throw error;
  }
}

interface DeploymentStatusPayload {
  installation?: { id: number };
  repository?: { id: number; full_name: string };
  deployment_status?: { state: string; environment?: string; environment_url?: string };
  deployment?: { id: number; sha: string; environment: string };
}

/**
 * A successful deployment of a commit to a GitHub environment, at its environment_url: kept, and
 * the commit gated again wherever it is gated, so that the runs waiting for it start against it.
 * A deployment that comes before its commit is gated is used when the commit is.
 */
async function recordDeployment(deps: GateDeps, payload: DeploymentStatusPayload, deliveryId: string): Promise<void> {
  const { installation, repository, deployment_status: status, deployment } = payload;
  if (!installation || !repository || !status || !deployment) return;
  const environment = status.environment || deployment.environment;
  if (status.state !== "success" || !status.environment_url) {
    deps.log.info(
      `Received deployment_status ${status.state} of ${repository.full_name}@${deployment.sha.slice(0, 7)} to '${environment}' (delivery ${deliveryId}): no URL to test yet`,
    );
    return;
  }
  await deps.store.write([
    "saveDeployment",
    {
      repository_id: repository.id,
      head_sha: deployment.sha,
      environment,
      deployment_id: deployment.id,
      url: status.environment_url,
      received_at: deps.clock.now().toISOString(),
    },
  ]);
  deps.log.info(
    `Received a deployment of ${repository.full_name}@${deployment.sha.slice(0, 7)} to '${environment}' at ${status.environment_url} (delivery ${deliveryId})`,
  );
  const [gated] = deps.store.listGitHubCommitsOfSha(repository.id, deployment.sha);
  if (gated) {
    // Gated again as GitHub knows it now: the same pull request, base and policy as any event would bring.
    const hint = {
      installationId: installation.id,
      repository: { id: repository.id, full_name: repository.full_name },
      headSha: deployment.sha,
      branch: gated.ref?.replace(/^refs\/heads\//, "") ?? null,
      rerun: false,
    };
    await gateCommit(deps, await resolveCommit(await deps.octokitFor(installation.id), hint, gated));
  }
}
