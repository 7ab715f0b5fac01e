import {
  DEFAULT_CHANGE_SETTINGS,
  type AssureConfig,
  type ChangeSettings,
  type DecisionBase,
} from "../../server/contract/index.js";
import { policyChanges } from "../../server/changes/policy-changes.js";
import { readPolicy, loadSpecDocumentHere, type LoadSpecDocument } from "../../server/releases/read-policy.js";
import type { ReadFile } from "../../server/specs/repository-spec.js";
import { baseBranchChain } from "./base-branch.js";
import { openCommit, type RepositoryApi, type RepositoryRef } from "./files.js";

/** A pull request as its comparison with the base branch needs it. */
export interface PullRequestSides {
  baseSha: string;
  /** The commit whose `.assure/` is the policy, when not the base: the default branch's tip for a pull request into another branch. */
  policySha?: string | undefined;
  headSha: string;
  /** The base branch's `.assure/config.yml`, when it has a valid one: its settings judge the head. */
  baseConfig: AssureConfig | null;
  /** The head's config and files: its policy. */
  headConfig: AssureConfig;
  headFiles: { paths: readonly string[]; read: ReadFile };
}

/**
 * What a pull request's head is judged against: the base branch's first-parent chain from the
 * merge base (where its baseline is looked for), the base's settings, and what the head removes or
 * relaxes in the base's `.assure/` (its policy). Undefined when GitHub knows no merge base. The
 * App and the Action both ask this of GitHub, so they judge a pull request alike.
 */
export async function pullRequestBase(
  octokit: RepositoryApi,
  repository: RepositoryRef,
  sides: PullRequestSides,
  loadDocument: LoadSpecDocument = loadSpecDocumentHere,
): Promise<DecisionBase | undefined> {
  const { baseConfig } = sides;
  const settings: ChangeSettings = baseConfig
    ? {
        baseline: baseConfig.baseline,
        flaky: baseConfig.flaky,
        policy_changes: baseConfig.policy_changes,
        executed_outside_service: baseConfig.executed_outside_service,
      }
    : DEFAULT_CHANGE_SETTINGS;
  const commits = await baseBranchChain(octokit, repository, sides.baseSha, sides.headSha, settings.baseline.depth);
  if (!commits || commits.length === 0) return undefined;
  const baseFiles = await openCommit(octokit, repository, sides.policySha ?? sides.baseSha);
  const basePolicy = baseFiles
    ? await readPolicy(baseConfig, baseFiles.paths, baseFiles.read, loadDocument)
    : await readPolicy(null, [], () => undefined);
  const headPolicy = await readPolicy(sides.headConfig, sides.headFiles.paths, sides.headFiles.read, loadDocument);
  return { commits, settings, policy_changes: policyChanges(basePolicy, headPolicy).slice(0, 1000) };
}
