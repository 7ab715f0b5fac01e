import type { ProbotOctokit } from "probot";
import type { RepositoryBinding } from "../../server/contract/index.js";
import { clockedCache } from "../../server/clock.js";
import { ApiError } from "../../server/errors.js";
import type { CommitGate } from "../../server/releases/commit-gate.js";
import { repositoryRef } from "../repository/files.js";
import type { GateDeps } from "./commit-to-gate.js";
import { gateCommit } from "./gate-commit.js";
import { resolveCommit } from "./resolve-commit.js";

/** How long GitHub's answer to "does the App reach this repository" is trusted: a new installation shows within a minute. */
const REACHED_MS = 10 * 60_000;
const NOT_REACHED_MS = 60_000;

interface Reach {
  installationId: number | null;
  full_name: string;
  default_branch: string;
}

const statusOf = (error: unknown) => (error as { status?: number }).status;

/** A GitHub failure the API answers as GitHub being unavailable (retryable); anything else goes on as it is. */
function githubUnavailable(error: unknown, what: string): unknown {
  if (error instanceof ApiError || statusOf(error) === undefined) return error;
  return new ApiError("GITHUB_UNAVAILABLE", {
    message: `GitHub did not answer while ${what} (${statusOf(error)}): try again later.`,
    headers: { "retry-after": "30" },
    cause: error,
  });
}

/**
 * The API's door to the App (server/releases/commit-gate.ts): whether the App's installation
 * reaches a bound repository — asked of GitHub, the repository's id checked, the answer kept a
 * while — and gating one of its commits as a delivery would, with what GitHub says of it.
 */
export function makeCommitGate(
  deps: GateDeps & { appOctokit: () => Promise<Pick<ProbotOctokit, "rest">> },
): CommitGate {
  const reached = clockedCache<number, Reach>(deps.clock, 10_000, REACHED_MS);

  async function reach(repository: RepositoryBinding): Promise<Reach> {
    const cached = reached.get(repository.github_id);
    if (cached) return cached;
    let found: Reach;
    try {
      const { data: installation } = await (
        await deps.appOctokit()
      ).rest.apps.getRepoInstallation({ ...repositoryRef(repository.full_name) });
      const { data: repo } = await (
        await deps.octokitFor(installation.id)
      ).rest.repos.get({ ...repositoryRef(repository.full_name) });
      // A repository of that name that is not the one bound (deleted and made again) is not reached.
      found =
        repo.id === repository.github_id
          ? {
              installationId: installation.id,
              full_name: repo.full_name,
              default_branch: repo.default_branch,
            }
          : { installationId: null, full_name: repository.full_name, default_branch: "" };
    } catch (error) {
      if (statusOf(error) !== 404) {
        throw githubUnavailable(error, `finding the App's installation on ${repository.full_name}`);
      }
      found = {
        installationId: null,
        full_name: repository.full_name,
        default_branch: "",
      };
    }
    reached.set(repository.github_id, found, { ttl: found.installationId === null ? NOT_REACHED_MS : REACHED_MS });
    return found;
  }

  const notGated = (message: string) => new ApiError("COMMIT_NOT_GATED", { message });

  return {
    async gates(repository) {
      return (await reach(repository)).installationId !== null;
    },
    async gate(projectId, repository, commitSha, { rerun }) {
      const { installationId, full_name, default_branch } = await reach(repository);
      if (installationId === null) throw notGated(`The GitHub App is not installed on ${repository.full_name}.`);
      const [known] = await deps.store.listGitHubCommitsOfSha(repository.github_id, commitSha);
      let outcome;
      try {
        const octokit = await deps.octokitFor(installationId);
        const commit = await resolveCommit(
          octokit,
          {
            installationId,
            repository: { id: repository.github_id, full_name, default_branch },
            headSha: commitSha,
            branch: undefined,
            rerun,
          },
          known,
        );
        // A commit of the default branch is the baseline (and the flakiness history) of pull requests:
        // a key may not roll its dice again; a writer's Re-run on GitHub may.
        if (rerun && commit.baseSha === null && commit.pullRequest === null) {
          throw notGated(
            `${full_name}@${commitSha.slice(0, 7)} is a commit of ${default_branch}, which pull requests are judged against: its runs are started again only by someone with write access (the check run's Re-run).`,
          );
        }
        outcome = await gateCommit(deps, commit);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        if (statusOf(error) === 404 || statusOf(error) === 422) {
          throw notGated(`GitHub does not know the commit ${commitSha} in ${full_name}.`);
        }
        throw githubUnavailable(error, `gating ${full_name}@${commitSha.slice(0, 7)}`);
      }
      if (!outcome) {
        throw notGated(
          `${full_name}@${commitSha.slice(0, 7)} has no .assure/config.yml, nor has its base branch: it is not gated.`,
        );
      }
      if (outcome.problem) throw notGated(`${outcome.problem.title}. ${outcome.problem.summary}`.slice(0, 4000));
      if (outcome.projectId !== projectId || !outcome.decision) {
        throw notGated(`The config of ${full_name}@${commitSha.slice(0, 7)} names another project.`);
      }
      return { decision: outcome.decision, created: outcome.created ?? false };
    },
  };
}
