import { createHash } from "node:crypto";

/** The prefix of Idempotency-Keys derived from a commit: such keys never expire. */
export const DERIVED_RUN_KEY_PREFIX = "gh1-";

/**
 * The prefix of the keys the GitHub App derives for the runs it plans. Only the App may use it, so
 * that no client can take a key of the App's first (with another body) and stall its runs.
 */
export const APP_RUN_KEY_PREFIX = "app1-";

export interface RunKeyInput {
  /** The repository's numeric id on GitHub. */
  repositoryId: number;
  commitSha: string;
  /** The spec file's path, relative to the repository's root. */
  specPath: string;
  environmentName: string;
  /** 1 for a commit's first runs; a re-run raises it. */
  attempt: number;
  /** The agent endpoint the runs test, when it is not the environment's own. */
  agentUrl?: string | undefined;
  /** The GitHub App's own run (APP_RUN_KEY_PREFIX), rather than a client's. */
  byApp?: boolean | undefined;
}

/**
 * The Idempotency-Key of the run of one spec, in one environment, for one commit: `gh1-` (`app1-`
 * for the App's) and the SHA-256 of those fields. Derived again, it finds the run it made: a
 * repeated gating, or a re-run of the workflow, starts nothing twice.
 */
export function runIdempotencyKey({
  repositoryId,
  commitSha,
  specPath,
  environmentName,
  attempt,
  agentUrl,
  byApp = false,
}: RunKeyInput): string {
  const fields = [repositoryId, commitSha, specPath, environmentName, attempt, agentUrl ?? null];
  return `${byApp ? APP_RUN_KEY_PREFIX : DERIVED_RUN_KEY_PREFIX}${createHash("sha256").update(JSON.stringify(fields)).digest("hex")}`;
}
