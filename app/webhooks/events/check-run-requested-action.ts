import { buttonNamed } from "../../checks/buttons.js";
import type { CommitToGate, GateDeps } from "../../gate/commit-to-gate.js";
import { repositoryRef } from "../../repository/files.js";
import type { GitHubEventHandler } from "./github-event.js";
import { gateNamedCommit, gateResolvedCommit, hintOfOurCheckRun, resolveNamedCommit } from "./gate-named-commit.js";
import { pressApprovePolicy } from "./press-approve-policy.js";

/**
 * A button of the App's check run pressed (app/checks/buttons.ts). It can be pressed by anyone
 * who sees it: only a writer may start runs. Approving a fork's runs starts them for the first
 * time, approving a policy change starts nothing; a re-run starts them again.
 */
export const pressCheckRunButton: GitHubEventHandler<"check_run.requested_action"> = async (
  deps,
  payload,
  { id: deliveryId, what },
) => {
  const button = buttonNamed(payload.requested_action?.identifier);
  const hint = button && (await hintOfOurCheckRun(deps, payload, button !== "approve" && button !== "approve-policy"));
  if (!hint) return gateNamedCommit(deps, what, undefined);
  const commit = await resolveNamedCommit(deps, hint);
  const sender = payload.sender?.login ?? "";
  const permission = await permissionOf(deps, commit, sender);
  const granted = permission === "admin" || permission === "write";
  if (button === "approve-policy") {
    await pressApprovePolicy(deps, { commit, sender, permission, deliveryId });
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
        delivery_id: deliveryId,
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
  await gateResolvedCommit(deps, what, commit);
};

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
