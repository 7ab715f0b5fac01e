import type { CommitToGate, GateDeps } from "../../gate/commit-to-gate.js";
import { gateCommit } from "../../gate/gate-commit.js";
import { resolveCommit, type CommitHint } from "../../gate/resolve-commit.js";

/** What every event's payload says of where it comes from (GitHub's payloads hold much more). */
interface EventSource {
  installation?: { id: number } | undefined;
  repository?: { id: number; full_name: string; default_branch?: string | undefined } | undefined;
}

/** The start of a commit hint: the installation and the repository; undefined when the event names neither. */
export function hintOf({
  installation,
  repository,
}: EventSource): Pick<CommitHint, "installationId" | "repository"> | undefined {
  if (!installation || !repository) return undefined;
  return {
    installationId: installation.id,
    repository: { id: repository.id, full_name: repository.full_name, default_branch: repository.default_branch },
  };
}

/**
 * What a check run's event names, when the check run is the App's (by its name, on its commit):
 * its head, to gate again.
 */
export async function hintOfOurCheckRun(
  deps: GateDeps,
  payload: EventSource & {
    check_run: { name: string; head_sha: string; check_suite?: { head_branch?: string | null } };
  },
  rerun: boolean,
): Promise<CommitHint | undefined> {
  const base = hintOf(payload);
  const run = payload.check_run;
  if (!base || !run) return undefined;
  const ours = (await deps.store.listGitHubCommitsOfSha(base.repository.id, run.head_sha)).some(
    (commit) => commit.check_name === run.name,
  );
  if (!ours) return undefined;
  return { ...base, headSha: run.head_sha, branch: run.check_suite?.head_branch ?? null, rerun };
}

/**
 * The commit as GitHub knows it (resolveCommit): only a pull request's events say for sure what
 * its base is and whether it comes from a fork, so the order events come in changes nothing.
 */
export async function resolveNamedCommit(deps: GateDeps, hint: CommitHint): Promise<CommitToGate> {
  const [known] = await deps.store.listGitHubCommitsOfSha(hint.repository.id, hint.headSha);
  return resolveCommit(await deps.octokitFor(hint.installationId), hint, known);
}

/** Gates the commit an event names; an event that names none is only acknowledged. */
export async function gateNamedCommit(deps: GateDeps, what: string, hint: CommitHint | undefined): Promise<void> {
  if (!hint) {
    deps.log.info(`Received ${what}: nothing to gate`);
    return;
  }
  await gateResolvedCommit(deps, what, await resolveNamedCommit(deps, hint));
}

export async function gateResolvedCommit(deps: GateDeps, what: string, commit: CommitToGate): Promise<void> {
  deps.log.info(
    `Received ${what}: gating ${commit.repository.full_name}@${commit.headSha.slice(0, 7)}${commit.rerun ? " again" : ""}`,
  );
  await gateCommit(deps, commit);
}
