import {
  ASSURE_CONFIG_PATH,
  DEFAULT_CHECK_NAME,
  type AssureConfig,
  type DecisionBase,
  type ReleaseDecision,
} from "../../server/contract/index.js";
import { planAppDecision } from "../../server/releases/create-decision.js";
import { readGatingConfig } from "../../server/releases/gating-config.js";
import { syncCheckRunJob } from "../checks/sync-check-run.js";
import { gateProblem, type GateProblem } from "../checks/gate-problem.js";
import { pullRequestBase } from "../repository/pull-request-base.js";
import type { LoadSpecDocument } from "../../server/releases/read-policy.js";
import { openCommit, readFileAt, repositoryRef, type CommitFiles } from "../repository/files.js";
import { planRuns } from "./plan-runs.js";
import { startPlannedRuns } from "./start-runs.js";
import type { CommitToGate, GateDeps } from "./commit-to-gate.js";

export type GateOutcome = {
  projectId: string | null;
  decision?: ReleaseDecision;
  created?: boolean;
  problem?: GateProblem;
};

/**
 * Gates one commit: reads `.assure/config.yml` at its head (the base's decides whether the
 * repository uses assure at all, under which check name, and how forks are treated), registers
 * each spec file, makes the commit's release decision — judged against its base when it has one —
 * and starts its runs; or, when the config, a spec or the project's binding is wrong, records the
 * problem. Either way the commit is saved for its check run to be published. Safe to repeat.
 * Returns what came of it; undefined when the repository does not use assure.
 */
export async function gateCommit(deps: GateDeps, commit: CommitToGate): Promise<GateOutcome | undefined> {
  const octokit = await deps.octokitFor(commit.installationId);
  const repository = repositoryRef(commit.repository.full_name);
  // A fork's commits live in the base repository; if it does not serve one by SHA, its pull ref does.
  const files = await openCommit(
    octokit,
    repository,
    commit.headSha,
    commit.fork && commit.pullRequest ? `refs/pull/${commit.pullRequest}/head` : undefined,
  );
  const headConfig = await files?.read(ASSURE_CONFIG_PATH);
  const policySha = commit.policySha ?? commit.baseSha;
  const baseConfig = policySha ? await readFileAt(octokit, repository, policySha, ASSURE_CONFIG_PATH) : undefined;
  if (!headConfig && !baseConfig) {
    deps.log.info(`${commit.repository.full_name}@${commit.headSha.slice(0, 7)}: no ${ASSURE_CONFIG_PATH}; not gated`);
    return undefined;
  }
  const head = headConfig ? readGatingConfig(headConfig) : undefined;
  const base = baseConfig ? readGatingConfig(baseConfig) : undefined;
  // The base branch's config names the check where it has one: rulesets require it by that name.
  const checkName =
    (base?.ok ? base.value.check_name : undefined) ??
    (head?.ok ? head.value.check_name : undefined) ??
    DEFAULT_CHECK_NAME;

  let outcome: GateOutcome;
  const held = commit.fork ? await holdFork(deps, commit, base?.ok ? base.value.forks : "approve") : undefined;
  if (held) {
    outcome = { projectId: null, problem: held };
  } else if (!head || !files) {
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
    outcome = await planAndStart(deps, files, commit, head.value, head.source.lineOf, base?.ok ? base.value : null);
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
      base_sha: commit.baseSha,
      fork: commit.fork,
      project_id: outcome.projectId,
      decision_id: outcome.decision?.decision_id ?? null,
      problem: outcome.problem ?? null,
      updated_at: now,
    },
    syncCheckRunJob(key, now),
  ]);
  return outcome;
}

/**
 * A pull request from a fork runs specs its author controls and spends the team's agent and judge:
 * the base branch's policy says whether it runs (`run`), never (`skip`), or once someone with write
 * access approves its head commit (`approve`, the default). Returns what holds it, if anything does.
 */
async function holdFork(
  deps: GateDeps,
  commit: CommitToGate,
  policy: AssureConfig["forks"],
): Promise<GateProblem | undefined> {
  if (policy === "run") return undefined;
  if (policy === "skip") {
    return gateProblem(
      "Skipped: pull requests from forks are not tested",
      `The base branch's ${ASSURE_CONFIG_PATH} says \`forks: skip\`: this pull request comes from a fork, so nothing was tested and it cannot pass this check. ` +
        "Set `forks: approve` to let a maintainer approve a fork's runs.",
      [],
      { conclusion: "action_required", action: "none" },
    );
  }
  const presses = await deps.store.listApprovalPresses(commit.repository.id, commit.headSha);
  if (presses.some((press) => press.granted)) return undefined;
  const refused = presses.map(
    (press) =>
      `- @${press.login} pressed *Approve and run* at ${press.pressed_at}, but has ${press.permission} access: nothing was started.`,
  );
  return gateProblem(
    "Waiting for a maintainer to approve a fork's runs",
    [
      `This pull request comes from a fork: its specs run against the team's agents only once someone with write access to ${commit.repository.full_name} approves this commit (\`forks: approve\`). ` +
        `Review the changes under \`.assure/\` first, then press **Approve and run**.`,
      ...(refused.length > 0 ? ["", ...refused] : []),
    ].join("\n"),
    [],
    { conclusion: "action_required", action: "approve" },
  );
}

async function planAndStart(
  deps: GateDeps,
  files: CommitFiles,
  commit: CommitToGate,
  config: AssureConfig,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
  baseConfig: AssureConfig | null,
): Promise<GateOutcome> {
  const project = await deps.store.getProject(config.project);
  if (!project || !project.repositories.some((r) => r.github_id === commit.repository.id)) {
    const message = project
      ? `project '${config.project}' does not list ${commit.repository.full_name} (id ${commit.repository.id}) among its repositories`
      : `project '${config.project}' does not exist`;
    return {
      projectId: null,
      problem: gateProblem(
        "The repository is not bound to the project",
        `This repository may not be gated for that project: ${message}. Bind it with PATCH /v1/projects/{id}.`,
        [{ path: ASSURE_CONFIG_PATH, line: lineOf(["project"]) ?? 1, message }],
      ),
    };
  }

  const { pairs, annotations } = await planRuns(deps, files, commit, project, config, lineOf);
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

  const plan = pairs.map((pair) => ({
    test_spec_id: pair.test_spec_id,
    environment_id: pair.environment.environment_id,
    spec_version: pair.spec_version,
    executor: pair.executor,
  }));
  const subject = { repository: commit.repository.full_name, commit_sha: commit.headSha };
  const base = commit.baseSha ? await baseOfHead(deps, commit, files, config, baseConfig) : undefined;
  const { decision, created } = await planAppDecision(deps, {
    project_id: project.project_id,
    subject,
    plan,
    base: base ?? null,
    rerun: commit.rerun,
  });
  await startPlannedRuns(deps, commit, project.project_id, decision, pairs);
  // As it stands once its runs are started (or wait).
  return {
    projectId: project.project_id,
    decision: (await deps.store.getDecision(decision.decision_id)) ?? decision,
    created,
  };
}

/** What a head is judged against (see pullRequestBase); undefined, with a warning, when GitHub knows no merge base. */
async function baseOfHead(
  deps: GateDeps,
  commit: CommitToGate,
  headFiles: CommitFiles,
  headConfig: AssureConfig,
  baseConfig: AssureConfig | null,
): Promise<DecisionBase | undefined> {
  const octokit = await deps.octokitFor(commit.installationId);
  // The policy's specs, base and head, are read off the event loop, as the specs the App registers are.
  const where = (path: string) => ({ repository: commit.repository.full_name, commit_sha: commit.headSha, path });
  const loadDocument: LoadSpecDocument = async (path, bytes, readFile) => {
    const read = await deps.specReader.readRepositoryFile(where(path), bytes, readFile);
    return read.ok ? read.document : undefined;
  };
  const base = await pullRequestBase(
    octokit,
    repositoryRef(commit.repository.full_name),
    {
      baseSha: commit.baseSha!,
      policySha: commit.policySha ?? commit.baseSha!,
      headSha: commit.headSha,
      baseConfig,
      headConfig,
      headFiles,
    },
    loadDocument,
  );
  if (!base) {
    deps.log.warn(
      `${commit.repository.full_name}@${commit.headSha.slice(0, 7)}: GitHub knows no merge base with ${commit.baseSha!.slice(0, 7)}; not compared`,
    );
  }
  return base;
}
