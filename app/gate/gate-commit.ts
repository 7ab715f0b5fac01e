import picomatch from "picomatch";
import type { ProbotOctokit } from "probot";
import {
  ASSURE_CONFIG_PATH,
  AssureConfig,
  DEFAULT_CHECK_NAME,
  TestSpecDocument,
  runIdempotencyKey,
  type ReleaseDecision,
} from "../../server/contract/index.js";
import { SCOPES } from "../../server/auth/scopes.js";
import type { Principal } from "../../server/auth/authenticate.js";
import { ApiError, coerceError } from "../../server/errors.js";
import { addSpecVersion } from "../../server/releases/add-spec-version.js";
import { createDecision, startAttempt } from "../../server/releases/create-decision.js";
import { createRun, type CreateRunDeps } from "../../server/runs/create-run.js";
import { validateYaml } from "../../server/specs/read-yaml.js";
import type { Logger } from "../../server/log.js";
import { syncCheckRunJob } from "../checks/sync-check-run.js";
import { gateProblem, type GateProblem } from "../checks/gate-problem.js";
import { listFilesAt, readFileAt, repositoryRef } from "../repository/files.js";

export interface GateDeps extends CreateRunDeps {
  log: Logger;
  octokitFor(installationId: number): Promise<ProbotOctokit>;
}

/** A commit to gate, as a webhook names it. */
export interface CommitToGate {
  installationId: number;
  repository: { id: number; full_name: string };
  headSha: string;
  /** The commit whose `.assure/` is the policy when the head has none (a pull request's base); null for a push. */
  baseSha: string | null;
  /** `refs/heads/<branch>` of the head, when known. */
  ref: string | null;
  pullRequest: number | null;
  /** Start the commit's runs again (a re-run): a new attempt. */
  rerun: boolean;
}

interface PlannedPair {
  test_spec_id: string;
  spec_version: string;
  specPath: string;
  environment_id: string;
  environmentName: string;
}

/** The App acts for the project it gates, as a key of that project with every scope would. */
const actingFor = (projectId: string): Principal => ({ key_id: "github-app", project_id: projectId, scopes: new Set(SCOPES) });

/**
 * Gates one commit: reads `.assure/config.yml` at its head (the base's decides whether the
 * repository uses assure at all), registers each spec file, makes the commit's release decision
 * and starts its runs — or, when the config, a spec or the project's binding is wrong, records the
 * problem. Either way the commit is saved for its check run to be published. Safe to repeat.
 */
export async function gateCommit(deps: GateDeps, commit: CommitToGate): Promise<void> {
  const octokit = await deps.octokitFor(commit.installationId);
  const repository = repositoryRef(commit.repository.full_name);
  const headConfig = await readFileAt(octokit, repository, commit.headSha, ASSURE_CONFIG_PATH);
  const baseConfig = commit.baseSha ? await readFileAt(octokit, repository, commit.baseSha, ASSURE_CONFIG_PATH) : undefined;
  if (!headConfig && !baseConfig) {
    deps.log.info(`${commit.repository.full_name}@${commit.headSha.slice(0, 7)}: no ${ASSURE_CONFIG_PATH}; not gated`);
    return;
  }
  const head = headConfig ? validateYaml(headConfig, AssureConfig) : undefined;
  const base = baseConfig ? validateYaml(baseConfig, AssureConfig) : undefined;
  const checkName = (head?.ok ? head.value.check_name : undefined) ?? (base?.ok ? base.value.check_name : undefined) ?? DEFAULT_CHECK_NAME;

  let outcome: { projectId: string | null; decision?: ReleaseDecision; problem?: GateProblem };
  if (!head) {
    outcome = {
      projectId: null,
      problem: gateProblem(
        `${ASSURE_CONFIG_PATH} is missing`,
        `The base branch gates this repository with ${ASSURE_CONFIG_PATH}, but this commit has none: nothing can be tested. Restore the file.`,
      ),
    };
  } else if (!head.ok) {
    outcome = {
      projectId: null,
      problem: gateProblem(
        `${ASSURE_CONFIG_PATH} is not valid`,
        `${head.problems.length} problem(s) in ${ASSURE_CONFIG_PATH}:\n${head.problems.map((p) => `- \`${p.path}\`: ${p.message}`).join("\n")}`,
        head.problems.map((p) => ({ path: ASSURE_CONFIG_PATH, line: p.line ?? 1, message: `${p.path}: ${p.message}` })),
      ),
    };
  } else {
    outcome = await planAndStart(deps, octokit, commit, head.value, head.source.lineOf);
  }

  const now = deps.clock.now().toISOString();
  const key = { repository_id: commit.repository.id, head_sha: commit.headSha, check_name: checkName };
  await deps.store.write([
    "saveGitHubCommit",
    {
      ...key,
      repository: commit.repository.full_name,
      installation_id: commit.installationId,
      ref: commit.ref,
      pull_request: commit.pullRequest,
      project_id: outcome.projectId,
      decision_id: outcome.decision?.decision_id ?? null,
      problem: outcome.problem ? JSON.stringify(outcome.problem) : null,
      updated_at: now,
    },
    syncCheckRunJob(key, now),
  ]);
}

async function planAndStart(
  deps: GateDeps,
  octokit: ProbotOctokit,
  commit: CommitToGate,
  config: AssureConfig,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): Promise<{ projectId: string | null; decision?: ReleaseDecision; problem?: GateProblem }> {
  const atConfig = (path: PropertyKey[], message: string) => ({ path: ASSURE_CONFIG_PATH, line: lineOf(path) ?? 1, message });
  const project = deps.store.getProject(config.project);
  if (!project || !project.repositories.some((r) => r.github_id === commit.repository.id)) {
    const message = project
      ? `project '${config.project}' does not list ${commit.repository.full_name} (id ${commit.repository.id}) among its repositories`
      : `project '${config.project}' does not exist`;
    return {
      projectId: null,
      problem: gateProblem("The repository is not bound to the project", `This repository may not be gated for that project: ${message}. Bind it with PATCH /v1/projects/{id}.`, [atConfig(["project"], message)]),
    };
  }

  const files = await listFilesAt(octokit, repositoryRef(commit.repository.full_name), commit.headSha);
  const annotations: GateProblem["annotations"] = [];
  const pairs: PlannedPair[] = [];
  const specsByPath = new Map<string, { test_spec_id: string; spec_version: string; name: string } | null>();

  for (const [r, entry] of config.runs.entries()) {
    const environments = entry.environments.map((name, e) => {
      const environment = deps.store.getEnvironmentRowByName(project.project_id, name);
      if (!environment) annotations.push(atConfig(["runs", r, "environments", e], `environment '${name}' does not exist in project '${project.project_id}'`));
      return environment;
    });
    for (const [s, glob] of entry.specs.entries()) {
      const isMatch = picomatch(glob, { dot: true });
      const matching = files.filter((file) => isMatch(file)).sort();
      if (matching.length === 0) annotations.push(atConfig(["runs", r, "specs", s], `'${glob}' matches no file at this commit`));
      for (const path of matching) {
        if (!specsByPath.has(path)) specsByPath.set(path, await registerSpec(deps, octokit, commit, project.project_id, path, annotations));
        const spec = specsByPath.get(path);
        if (!spec) continue;
        for (const [e, environment] of environments.entries()) {
          if (!environment || pairs.some((p) => p.specPath === path && p.environment_id === environment.environment_id)) continue;
          pairs.push({ test_spec_id: spec.test_spec_id, spec_version: spec.spec_version, specPath: path, environment_id: environment.environment_id, environmentName: entry.environments[e]! });
        }
      }
    }
  }
  const byName = new Map<string, string>();
  for (const [path, spec] of specsByPath) {
    if (!spec) continue;
    const other = byName.get(spec.name);
    if (other) annotations.push({ path, line: 1, message: `${path} and ${other} are both named '${spec.name}': a spec's name must be unique` });
    byName.set(spec.name, path);
  }
  if (annotations.length > 0) {
    return {
      projectId: project.project_id,
      problem: gateProblem(
        `The specs at this commit cannot run (${annotations.length} problem(s))`,
        annotations.map((a) => `- \`${a.path}\` line ${a.line}: ${a.message}`).join("\n"),
        annotations,
      ),
    };
  }

  const plan = pairs.map(({ test_spec_id, environment_id }) => ({ test_spec_id, environment_id }));
  const subject = { repository: commit.repository.full_name, commit_sha: commit.headSha };
  let { decision, created } = await createDecision(deps, project.project_id, { subject, plan });
  if (commit.rerun && !created) decision = await startAttempt(deps, decision, plan);
  for (const pair of pairs) await startPlannedRun(deps, commit, project.project_id, decision.attempt, pair);
  return { projectId: project.project_id, decision };
}

/** Registers a spec file at the commit as a version of its spec; null (and annotations) if it is not a valid spec. */
async function registerSpec(
  deps: GateDeps,
  octokit: ProbotOctokit,
  commit: CommitToGate,
  projectId: string,
  path: string,
  annotations: GateProblem["annotations"],
): Promise<{ test_spec_id: string; spec_version: string; name: string } | null> {
  const bytes = await readFileAt(octokit, repositoryRef(commit.repository.full_name), commit.headSha, path);
  if (!bytes) {
    annotations.push({ path, line: 1, message: "the file could not be read at this commit" });
    return null;
  }
  const read = validateYaml(bytes, TestSpecDocument);
  if (!read.ok) {
    for (const problem of read.problems) annotations.push({ path, line: problem.line ?? 1, message: `${problem.path}: ${problem.message}` });
    return null;
  }
  const { spec } = await addSpecVersion(deps, projectId, read.value, {
    text: read.source,
    source: { repository: commit.repository.full_name, commit_sha: commit.headSha, path },
  });
  return { test_spec_id: spec.test_spec_id, spec_version: spec.spec_version, name: spec.name };
}

/** Starts (or finds: the key is derived from the commit) the run of one planned spec and environment. */
async function startPlannedRun(deps: GateDeps, commit: CommitToGate, projectId: string, attempt: number, pair: PlannedPair): Promise<void> {
  const key = runIdempotencyKey({
    repositoryId: commit.repository.id,
    commitSha: commit.headSha,
    specPath: pair.specPath,
    environmentName: pair.environmentName,
    attempt,
  });
  const source = {
    repository: commit.repository.full_name,
    commit_sha: commit.headSha,
    ...(commit.ref ? { ref: commit.ref } : {}),
    ...(commit.pullRequest ? { pull_request: commit.pullRequest } : {}),
  };
  try {
    await createRun(deps, actingFor(projectId), { test_spec_id: pair.test_spec_id, environment_id: pair.environment_id, spec_version: pair.spec_version, source }, key);
  } catch (raw) {
    const error = coerceError(raw);
    // Not ready yet: the delivery is processed again with backoff; the decision waits meanwhile.
    if (error instanceof ApiError && error.retryable) throw new Error(`${pair.specPath} in ${pair.environmentName}: ${error.message}`, { cause: error });
    throw error;
  }
}
