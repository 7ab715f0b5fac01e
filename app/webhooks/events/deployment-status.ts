import type { GitHubEventHandler } from "./github-event.js";
import { gateCommit } from "../../gate/gate-commit.js";
import { resolveCommit } from "../../gate/resolve-commit.js";

/**
 * A successful deployment of a commit to a GitHub environment, at its environment_url: kept, and
 * the commit gated again wherever it is gated, so that the runs waiting for it start against it.
 * A deployment that comes before its commit is gated is used when the commit is.
 */
export const recordDeployment: GitHubEventHandler<"deployment_status"> = async (deps, payload, { id: deliveryId }) => {
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
  const [gated] = await deps.store.listGitHubCommitsOfSha(repository.id, deployment.sha);
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
};
