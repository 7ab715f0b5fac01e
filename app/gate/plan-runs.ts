import { ASSURE_CONFIG_PATH, type AssureConfig, type Project, type RunSource } from "../../server/contract/index.js";
import { ApiError } from "../../server/errors.js";
import { addRepositorySpec } from "../../server/releases/add-spec-version.js";
import { planConfigRuns } from "../../server/releases/config-plan.js";
import { resolveRunAgent } from "../../server/runs/agent-url.js";
import type { EnvironmentRow } from "../../server/store/index.js";
import type { GateProblem } from "../checks/gate-problem.js";
import type { CommitFiles } from "../repository/files.js";
import { sourceOf, type CommitToGate, type GateDeps } from "./commit-to-gate.js";

/** A spec to run in an environment for the commit: a slot of its decision. */
export interface PlannedPair {
  test_spec_id: string;
  spec_version: string;
  specPath: string;
  environment: EnvironmentRow;
  /** The GitHub environment whose deployment the run waits for, and its URL once deployed. */
  deployment: { environment: string; url: string | undefined } | null;
  /** How long the run may wait for its deployment, or for its agent to be ready (or for its upload). */
  timeoutMs: number;
  /** local: the decision waits for the run to be uploaded; the App starts none. */
  executor: "service" | "local";
}

export type Annotations = GateProblem["annotations"];

/**
 * What the config asks to run at this commit: each spec file its globs match, registered as a
 * version of its spec, in each environment named — and where each run's agent is (the environment's
 * URL filled from the commit, or its deployment's), checked before anything starts. What is wrong
 * becomes an annotation at the line of the config or spec that says it.
 */
export async function planRuns(
  deps: GateDeps,
  files: CommitFiles,
  commit: CommitToGate,
  project: Project,
  config: AssureConfig,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): Promise<{ pairs: PlannedPair[]; annotations: Annotations }> {
  const atConfig = (path: PropertyKey[], message: string) => ({
    path: ASSURE_CONFIG_PATH,
    line: lineOf(path) ?? 1,
    message,
  });
  const annotations: Annotations = [];
  const pairs: PlannedPair[] = [];
  const specsByPath = new Map<string, { test_spec_id: string; spec_version: string; name: string } | null>();
  const source = sourceOf(commit);

  // An environment a config entry names: it exists, and its agent may be tested for this commit.
  const checkTarget = async (r: number, e: number, name: string, deployment: PlannedPair["deployment"]) => {
    const environment = await deps.store.getEnvironmentRowByName(project.project_id, name);
    if (!environment) {
      annotations.push(
        atConfig(
          ["runs", r, "environments", e],
          `environment '${name}' does not exist in project '${project.project_id}'`,
        ),
      );
      return undefined;
    }
    const refused = agentRefusal(deps, environment, source, deployment);
    if (refused) {
      annotations.push(
        deployment
          ? atConfig(
              ["runs", r, "on_deployment"],
              `the deployment of '${deployment.environment}' at ${deployment.url} may not be tested in '${name}': ${refused}`,
            )
          : atConfig(["runs", r, "environments", e], refused),
      );
      return undefined;
    }
    return { environment, deployment };
  };
  // Each environment a config entry names, checked once.
  const environments: Awaited<ReturnType<typeof checkTarget>>[][] = [];
  for (const [r, entry] of config.runs.entries()) {
    const deployment = entry.on_deployment
      ? {
          environment: entry.on_deployment,
          url: (await deps.store.getLatestDeployment(commit.repository.id, commit.headSha, entry.on_deployment))?.url,
        }
      : null;
    const targets = [];
    for (const [e, name] of entry.environments.entries()) targets.push(await checkTarget(r, e, name, deployment));
    environments.push(targets);
  }
  const asked = planConfigRuns(config, files.paths);
  for (const { entry, spec, glob } of asked.unmatched) {
    annotations.push(atConfig(["runs", entry, "specs", spec], `'${glob}' matches no file at this commit`));
  }
  for (const pair of asked.pairs) {
    if (!specsByPath.has(pair.specPath)) {
      specsByPath.set(
        pair.specPath,
        await registerSpec(deps, files, commit, project.project_id, pair.specPath, annotations),
      );
    }
    const spec = specsByPath.get(pair.specPath);
    const target = environments[pair.entry]![pair.environment];
    if (!spec || !target) continue;
    pairs.push({
      test_spec_id: spec.test_spec_id,
      spec_version: spec.spec_version,
      specPath: pair.specPath,
      environment: target.environment,
      deployment: target.deployment,
      timeoutMs: pair.deploymentTimeoutMs,
      executor: pair.executor,
    });
  }
  const byName = new Map<string, string>();
  for (const [path, spec] of specsByPath) {
    if (!spec) continue;
    const other = byName.get(spec.name);
    if (other) {
      annotations.push({
        path,
        line: 1,
        message: `${path} and ${other} are both named '${spec.name}': a spec's name must be unique`,
      });
    }
    byName.set(spec.name, path);
  }
  return { pairs, annotations };
}

/** Why the environment's agent may not be tested for this commit (its template cannot be filled, a URL is not allowed), if it may not. */
function agentRefusal(
  deps: GateDeps,
  environment: EnvironmentRow,
  source: RunSource,
  deployment: PlannedPair["deployment"],
): string | undefined {
  if (deployment && deployment.url === undefined) return undefined; // checked when the deployment comes
  try {
    resolveRunAgent(environment, source, deployment?.url, deps.egress);
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const details = (error.details ?? []).map((d) => `${d.path.replace(/^body\./, "")}: ${d.message}`).join("; ");
    return `${error.message}${details ? ` (${details})` : ""}`;
  }
}

/** Registers a spec file at the commit as a version of its spec; null (and annotations) if it is not a valid spec. */
async function registerSpec(
  deps: GateDeps,
  files: CommitFiles,
  commit: CommitToGate,
  projectId: string,
  path: string,
  annotations: Annotations,
): Promise<{ test_spec_id: string; spec_version: string; name: string } | null> {
  const bytes = await files.read(path);
  if (!bytes) {
    annotations.push({ path, line: 1, message: files.tooLarge(path) ?? "the file could not be read at this commit" });
    return null;
  }
  const added = await addRepositorySpec(
    deps,
    projectId,
    { repository: commit.repository.full_name, commit_sha: commit.headSha, path },
    bytes,
    (table) => files.read(table),
  );
  if (!added.ok) {
    for (const problem of added.problems) {
      annotations.push({ path: problem.file, line: problem.line, message: `${problem.path}: ${problem.message}` });
    }
    // A table too large to read is "not in the repository" to the reader: say why.
    for (const table of new Set(
      added.problems
        .map((problem) => /'(\.assure\/[^']+)' is not in the repository/.exec(problem.message)?.[1])
        .filter((file): file is string => Boolean(file)),
    )) {
      const why = files.tooLarge(table);
      if (why) annotations.push({ path, line: 1, message: why });
    }
    return null;
  }
  const { spec } = added;
  return { test_spec_id: spec.test_spec_id, spec_version: spec.spec_version, name: spec.name };
}
