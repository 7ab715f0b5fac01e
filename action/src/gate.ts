import {
  AssureConfig,
  DEFAULT_CHANGE_SETTINGS,
  runIdempotencyKey,
  type Environment,
  type ReleaseDecision,
  type Run,
  type RunSource,
  type TestSpec,
  type TestSpecDocument,
} from "../../server/contract/index.js";
import { planConfigRuns, type ConfigPair } from "../../server/releases/config-plan.js";
import { validateYaml } from "../../server/specs/read-yaml.js";
import { loadRepositorySpec } from "../../server/specs/repository-spec.js";
import { toSpecVersion } from "../../server/specs/spec-version.js";
import { versionRow, type ReadVersion } from "../../server/spec-reader/read-spec.js";
import { AssureApiError, type AssureClient } from "./assure-client.js";
import { baseOfPullRequest } from "./base-branch.js";
import type { CommitFiles } from "./commit-files.js";
import type { ActionInputs } from "./inputs.js";
import type { GatedCommit } from "./workflow-context.js";

/** A problem at a place in the repository's files: reported as an annotation there. */
export class FileProblemsError extends Error {
  override name = "FileProblemsError";
  constructor(
    message: string,
    readonly problems: { file: string; line: number; message: string }[],
  ) {
    super(message);
  }
}

/** A spec file of the commit, registered: its spec, version, and the line of each of its parts. */
export interface UploadedSpec {
  path: string;
  test_spec_id: string;
  spec_version: string;
  name: string;
  lines: Record<string, number>;
  /** The version as read here from the commit's files: what a run held in the job plays. */
  version: ReadVersion;
  /** The spec as read here: what the report names its checks by. */
  document: TestSpecDocument;
}

export interface StartedGate {
  projectId: string;
  decision: ReleaseDecision;
  /** The runs this step started or found, with what they test. */
  runs: { run: Run; spec: UploadedSpec; environmentName: string }[];
  specs: Map<string, UploadedSpec>;
  /** Config entries that wait for a deployment, which this step did not run (no agent-url). */
  skipped: ConfigPair[];
}

/**
 * Starts the commit's runs as the App would: the same config, the same spec versions (`git:` blob
 * SHAs), the same decision, and runs under the same derived Idempotency-Keys and bodies — so that
 * whichever of the two comes first creates them and the other finds them.
 */
export async function startGate(
  client: AssureClient,
  inputs: ActionInputs,
  commit: GatedCommit,
  files: CommitFiles,
  log: (line: string) => void,
  warn: (line: string) => void = log,
): Promise<StartedGate> {
  const config = inputs.specs.length > 0 ? configFromInputs(inputs) : readConfig(inputs, files);
  const projectId = inputs.project ?? config.project;
  const { pairs, unmatched } = planConfigRuns(config, files.paths);
  if (unmatched.length > 0) {
    throw new FileProblemsError(
      `${unmatched.length} spec glob(s) match no file at ${commit.sha.slice(0, 7)}`,
      unmatched.map((u) => ({
        file: inputs.configPath,
        line: 1,
        message: `'${u.glob}' matches no file at this commit`,
      })),
    );
  }

  const specs = new Map<string, UploadedSpec>();
  for (const path of new Set(pairs.map((pair) => pair.specPath))) {
    specs.set(path, await uploadSpec(client, projectId, commit, files, path));
  }
  const environments = await environmentsByName(client, projectId);
  const missing = [...new Set(pairs.map((pair) => pair.environmentName))].filter((name) => !environments.has(name));
  if (missing.length > 0) {
    throw new Error(`Project ${projectId} has no environment named ${missing.map((name) => `'${name}'`).join(", ")}.`);
  }

  // In the job: every run is held here and uploaded, so the decision waits for uploads, not for the service.
  const inJob = inputs.execute === "in-job";
  const plan = pairs.map((pair) => ({
    test_spec_id: specs.get(pair.specPath)!.test_spec_id,
    environment_id: environments.get(pair.environmentName)!.environment_id,
    ...(inJob || pair.executor === "local" ? { executor: "local" as const } : {}),
  }));
  const subject = { repository: commit.repository.full_name, commit_sha: commit.sha };
  // A pull request is judged against its base branch, as the App judges it.
  const base =
    commit.pullRequest && commit.baseSha && inputs.githubToken
      ? await baseOfPullRequest(inputs.githubToken, commit, config, inputs.configPath, files, warn)
      : undefined;
  if (commit.pullRequest && !inputs.githubToken) {
    warn("No github-token: the change is not compared with the base branch.");
  }
  let decision: ReleaseDecision;
  try {
    ({ body: decision } = await client.post<ReleaseDecision>("/v1/release-decisions", {
      project_id: projectId,
      subject,
      plan,
      ...(base ? { base } : {}),
    }));
  } catch (error) {
    if (!(error instanceof AssureApiError && error.code === "PLANNED_BY_APP")) throw error;
    return gatedByApp(client, inputs, commit, projectId, specs, environments, log, warn);
  }
  log(
    `${commit.repository.full_name} is not gated by the assure GitHub App here: this step planned the decision (planned_by: client), and no check run shows it.`,
  );
  if (inputs.newAttempt) {
    ({ body: decision } = await client.post<ReleaseDecision>(`/v1/release-decisions/${decision.decision_id}/attempts`, {
      plan,
    }));
    log(`Started attempt ${decision.attempt} of ${commit.repository.full_name}@${commit.sha.slice(0, 7)}`);
  }

  const source: RunSource = {
    repository: commit.repository.full_name,
    commit_sha: commit.sha,
    ...(commit.ref ? { ref: commit.ref } : {}),
    ...(commit.pullRequest ? { pull_request: commit.pullRequest } : {}),
  };
  const runs: StartedGate["runs"] = [];
  const skipped: ConfigPair[] = [];
  for (const pair of pairs) {
    if (inJob) continue; // held in this job and uploaded into its slot (in-job.ts)
    // A run that waits for a deployment has no agent to test until one is named here (or deployed: the App).
    // A run executed outside the service is uploaded by whoever executes it (assure test --upload, execute: in-job).
    if (pair.executor === "local" || (pair.onDeployment && !inputs.agentUrl)) {
      skipped.push(pair);
      continue;
    }
    const spec = specs.get(pair.specPath)!;
    const key = runIdempotencyKey({
      repositoryId: commit.repository.id,
      commitSha: commit.sha,
      specPath: pair.specPath,
      environmentName: pair.environmentName,
      attempt: decision.attempt,
      ...(inputs.agentUrl ? { agentUrl: inputs.agentUrl } : {}),
    });
    const body = {
      test_spec_id: spec.test_spec_id,
      environment_id: environments.get(pair.environmentName)!.environment_id,
      spec_version: spec.spec_version,
      source,
      ...(inputs.agentUrl ? { agent_url: inputs.agentUrl } : {}),
    };
    const { status, body: run } = await client.post<Run>("/v1/runs", body, { "idempotency-key": key });
    log(
      `${run.run_id}: ${pair.specPath} in ${pair.environmentName} (${status === 201 ? "started" : "found: started before"})`,
    );
    runs.push({ run, spec, environmentName: pair.environmentName });
  }
  return { projectId, decision, runs, specs, skipped };
}

/**
 * A repository the assure GitHub App gates: the App plans the commit's decision from what GitHub
 * says, and starts its runs. The step only asks for it (a new attempt, if asked), then reports.
 */
async function gatedByApp(
  client: AssureClient,
  inputs: ActionInputs,
  commit: GatedCommit,
  projectId: string,
  specs: Map<string, UploadedSpec>,
  environments: Map<string, Environment>,
  log: (line: string) => void,
  warn: (line: string) => void,
): Promise<StartedGate> {
  log(
    `${commit.repository.full_name} is gated by the assure GitHub App: it plans this commit's decision from GitHub, and starts its runs.`,
  );
  if (inputs.agentUrl && inputs.execute !== "in-job") {
    warn(
      "agent-url is not used: the GitHub App tests the agent its plan names (the environment's, or the deployment GitHub reports for on_deployment); with execute: in-job it is the agent of the runs the plan leaves to be executed outside the service.",
    );
  }
  let { body: decision } = await client.post<ReleaseDecision>("/v1/release-decisions", {
    project_id: projectId,
    subject: { repository: commit.repository.full_name, commit_sha: commit.sha },
  });
  if (inputs.newAttempt) {
    ({ body: decision } = await client.post<ReleaseDecision>(
      `/v1/release-decisions/${decision.decision_id}/attempts`,
      {},
    ));
    log(`Started attempt ${decision.attempt} of ${commit.repository.full_name}@${commit.sha.slice(0, 7)}`);
  }
  const specsById = new Map([...specs.values()].map((spec) => [spec.test_spec_id, spec]));
  const environmentNames = new Map(
    [...environments.values()].map((environment) => [environment.environment_id, environment.name]),
  );
  const runs: StartedGate["runs"] = [];
  for (const slot of decision.planned) {
    const spec = specsById.get(slot.test_spec_id);
    const environmentName = environmentNames.get(slot.environment_id) ?? slot.environment_id;
    if (!slot.run_id) {
      log(
        `${spec?.path ?? slot.test_spec_id} in ${environmentName}: ${slot.waiting ? `waits for ${slot.waiting.for}` : "not started yet"}`,
      );
      continue;
    }
    const { body: run } = await client.get<Run>(`/v1/runs/${slot.run_id}`);
    log(`${run.run_id}: ${spec?.path ?? slot.test_spec_id} in ${environmentName} (started by the App)`);
    if (spec) runs.push({ run, spec, environmentName });
  }
  return { projectId, decision, runs, specs, skipped: [] };
}

function readConfig(inputs: ActionInputs, files: CommitFiles): AssureConfig {
  const bytes = files.read(inputs.configPath);
  if (!bytes) {
    throw new Error(
      `No ${inputs.configPath} at this commit: add one (the App's format), or give the specs and environments inputs.`,
    );
  }
  const read = validateYaml(bytes, AssureConfig);
  if (!read.ok) {
    throw new FileProblemsError(
      `${inputs.configPath} is not valid`,
      read.problems.map((p) => ({ file: inputs.configPath, line: p.line ?? 1, message: `${p.path}: ${p.message}` })),
    );
  }
  return read.value;
}

function configFromInputs(inputs: ActionInputs): AssureConfig {
  if (!inputs.project) throw new Error("With the specs and environments inputs, give the project input too.");
  return {
    version: 1,
    project: inputs.project,
    check_name: "assure/release-gate",
    forks: "approve",
    runs: [
      { specs: inputs.specs, environments: inputs.environments, executor: "service", deployment_timeout: 30 * 60_000 },
    ],
    ...DEFAULT_CHANGE_SETTINGS,
  };
}

/**
 * Registers a spec file at the commit, as the App does: read (with the tables it names) and
 * checked here first, so that problems become annotations; then its text and its tables' are
 * sent with where they came from, and the service reads them as the App would.
 */
async function uploadSpec(
  client: AssureClient,
  projectId: string,
  commit: GatedCommit,
  files: CommitFiles,
  path: string,
): Promise<UploadedSpec> {
  const bytes = files.read(path)!;
  const loaded = await loadRepositorySpec(path, bytes, (table) => files.read(table));
  if (!loaded.ok) {
    throw new FileProblemsError(
      `${path} is not a valid spec`,
      loaded.problems.map((p) => ({ file: p.file, line: p.line, message: `${p.path}: ${p.message}` })),
    );
  }
  const { document, text, files: read, expanded } = loaded.spec;
  // The bytes as they are (base64): the service hashes exactly what the App would read.
  const tables = read
    .slice(1)
    .map((table) => ({ path: table.path, content: files.read(table.path)!.toString("base64"), encoding: "base64" }));
  const file = {
    repository: commit.repository.full_name,
    commit_sha: commit.sha,
    path,
    content: bytes.toString("base64"),
    encoding: "base64",
    ...(tables.length > 0 ? { tables } : {}),
  };
  const { body } = await client.post<TestSpec>("/v1/test-specs", { project_id: projectId, file });
  const parts = toSpecVersion(document, text, { fromRepository: true, expanded });
  return {
    path,
    test_spec_id: body.test_spec_id,
    spec_version: body.spec_version,
    name: body.name,
    lines: parts.lines ?? {},
    version: versionRow(document, parts, { format: "yaml", text: text.text }, null),
    document,
  };
}

async function environmentsByName(client: AssureClient, projectId: string): Promise<Map<string, Environment>> {
  const byName = new Map<string, Environment>();
  let cursor: string | null = null;
  do {
    const query: string = new URLSearchParams({
      project_id: projectId,
      limit: "100",
      ...(cursor ? { cursor } : {}),
    }).toString();
    const { body } = await client.get<{ data: Environment[]; next_cursor: string | null }>(`/v1/environments?${query}`);
    for (const environment of body.data) byName.set(environment.name, environment);
    cursor = body.next_cursor;
  } while (cursor);
  return byName;
}
