import { getOctokit } from "@actions/github";
import { AssureConfig, type DecisionBase } from "../../server/contract/index.js";
import { validateYaml } from "../../server/specs/read-yaml.js";
import { readFileAt, repositoryRef } from "../../app/repository/files.js";
import { pullRequestBase } from "../../app/repository/pull-request-base.js";
import type { CommitFiles } from "./commit-files.js";
import type { GatedCommit } from "./workflow-context.js";

/**
 * What the pull request's head is judged against, asked of GitHub with the workflow's token as the
 * App asks it with its installation's: the merge base and the base branch's first parents (where
 * the baseline is looked for), the base's settings and its `.assure/` as the policy. Undefined,
 * with a warning saying why, when it cannot be known: the decision then compares nothing.
 */
export async function baseOfPullRequest(
  githubToken: string,
  commit: GatedCommit,
  headConfig: AssureConfig,
  configPath: string,
  files: CommitFiles,
  warn: (line: string) => void,
): Promise<DecisionBase | undefined> {
  const octokit = getOctokit(githubToken);
  const repository = repositoryRef(commit.repository.full_name);
  const baseSha = commit.baseSha!;
  try {
    const bytes = await readFileAt(octokit, repository, baseSha, configPath);
    const read = bytes ? validateYaml(bytes, AssureConfig) : undefined;
    const base = await pullRequestBase(octokit, repository, {
      baseSha,
      headSha: commit.sha,
      baseConfig: read?.ok ? read.value : null,
      headConfig,
      headFiles: { paths: files.paths, read: (path) => files.read(path) },
    });
    if (!base) {
      warn(
        `GitHub knows no merge base of ${commit.sha.slice(0, 7)} with ${baseSha.slice(0, 7)}: the change is not compared with the base branch.`,
      );
    }
    return base;
  } catch (error) {
    const status = (error as { status?: number }).status;
    const why =
      status === 401 || status === 403
        ? `GitHub refused the github-token (${status}): it needs contents: read`
        : (error as Error).message;
    warn(
      `Could not read the base branch ${baseSha.slice(0, 7)} from GitHub (${why}): the change is not compared with the base branch.`,
    );
    return undefined;
  }
}
