import { runIdempotencyKey, type ReleaseDecision } from "../../server/contract/index.js";
import { actingForProject } from "../../server/auth/github-app-principal.js";
import { ApiError } from "../../server/errors.js";
import type { NewJob } from "../../server/store/jobs.js";
import { createRun } from "../../server/runs/create-run.js";
import { sourceOf, type CommitToGate, type GateDeps } from "./commit-to-gate.js";
import type { PlannedPair } from "./plan-runs.js";

/** The job that gates a commit again later: its agent was not ready yet. */
export const GATE_GITHUB_COMMIT = "gate_github_commit";

export function gateCommitJob(commit: CommitToGate, runAt: string): NewJob {
  return {
    task: GATE_GITHUB_COMMIT,
    job_key: `${GATE_GITHUB_COMMIT}:${commit.repository.id}:${commit.headSha}:${runAt}`,
    payload: { ...commit, rerun: false },
    run_at: runAt,
    max_attempts: 8,
  };
}

/** The refusals a planned run waits out, and what its decision says it waits for. */
const WAITS_FOR: Partial<Record<string, string>> = {
  ENVIRONMENT_NOT_READY: "its agent to be ready",
  RATE_LIMITED: "room under the project's run creation limit",
  RUN_QUOTA_EXCEEDED: "room under the project's queued runs quota",
};

/**
 * Starts (or finds: keys are derived from the commit) the run of each planned pair. A pair whose
 * deployment has not come yet, or whose agent is not ready, waits instead: its decision says for
 * what, and gives up at the pair's deadline; a commit whose agent was not ready is gated again
 * after `waitRetryMs`, until the deadline.
 */
export async function startPlannedRuns(
  deps: GateDeps,
  commit: CommitToGate,
  projectId: string,
  decision: ReleaseDecision,
  pairs: readonly PlannedPair[],
): Promise<void> {
  const now = deps.clock.now();
  const waitFor = async (pair: PlannedPair, what: string) => {
    const [until] = await deps.store.write([
      "waitForPlannedRun",
      {
        decision_id: decision.decision_id,
        test_spec_id: pair.test_spec_id,
        environment_id: pair.environment.environment_id,
        waiting_for: what,
        wait_until: new Date(now.getTime() + pair.timeoutMs).toISOString(),
      },
      now.toISOString(),
    ]);
    return until;
  };
  let retryBefore: string | undefined;
  for (const pair of pairs) {
    const slot = decision.planned.find(
      (p) => p.test_spec_id === pair.test_spec_id && p.environment_id === pair.environment.environment_id,
    );
    if (slot?.run_id) continue;
    if (pair.executor === "local") {
      await waitFor(pair, "its run, executed outside the service, to be uploaded (assure test --upload)");
      continue;
    }
    if (pair.deployment && pair.deployment.url === undefined) {
      await waitFor(pair, `a successful deployment of '${pair.deployment.environment}' of this commit`);
      continue;
    }
    try {
      await startPlannedRun(deps, commit, projectId, decision.attempt, pair);
    } catch (error) {
      // The agent is not up yet (a deployment still starting, say), or the project is at its limits: wait, and try again.
      if (!(error instanceof ApiError && WAITS_FOR[error.code])) throw error;
      const until = await waitFor(pair, `${WAITS_FOR[error.code]} (${error.message})`);
      if (until && (!retryBefore || until < retryBefore)) retryBefore = until;
    }
  }
  const retryAt = new Date(now.getTime() + deps.waitRetryMs).toISOString();
  if (retryBefore && retryAt < retryBefore) {
    await deps.store.write(["enqueueJob", gateCommitJob(commit, retryAt)]);
  }
}

async function startPlannedRun(
  deps: GateDeps,
  commit: CommitToGate,
  projectId: string,
  attempt: number,
  pair: PlannedPair,
): Promise<void> {
  const agentUrl = pair.deployment?.url;
  const key = runIdempotencyKey({
    repositoryId: commit.repository.id,
    commitSha: commit.headSha,
    specPath: pair.specPath,
    environmentName: pair.environment.name,
    attempt,
    ...(agentUrl ? { agentUrl } : {}),
    byApp: true,
  });
  await createRun(
    deps,
    actingForProject(projectId),
    {
      test_spec_id: pair.test_spec_id,
      environment_id: pair.environment.environment_id,
      spec_version: pair.spec_version,
      source: sourceOf(commit),
      ...(agentUrl ? { agent_url: agentUrl } : {}),
    },
    key,
  );
}
