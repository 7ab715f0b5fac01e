import { createHash } from "node:crypto";

/** The prefix of Idempotency-Keys derived from a commit: such keys never expire. */
export const DERIVED_RUN_KEY_PREFIX = "gh1-";

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
}

/**
 * The Idempotency-Key of the run of one spec, in one environment, for one commit: `gh1-` and the
 * SHA-256 of those fields. The GitHub App and the Action both derive it, so whichever comes first
 * creates the run and the other finds it.
 */
export function runIdempotencyKey({ repositoryId, commitSha, specPath, environmentName, attempt, agentUrl }: RunKeyInput): string {
  const fields = [repositoryId, commitSha, specPath, environmentName, attempt, agentUrl ?? null];
  return `${DERIVED_RUN_KEY_PREFIX}${createHash("sha256").update(JSON.stringify(fields)).digest("hex")}`;
}
