import { z } from "zod";
import type { ProbotOctokit } from "probot";
import type { RunSource } from "../../server/contract/index.js";
import type { Logger } from "../../server/log.js";
import type { CreateRunDeps } from "../../server/runs/create-run.js";
import type { SpecReader } from "../../server/spec-reader/spec-reader.js";

/*
 * What every step of gating a commit shares: the commit, the App's dependencies, and the source a
 * run of the commit carries. The steps import it, and import each other one way only:
 * gate-commit → plan-runs, start-runs (→ plan-runs) → commit-to-gate; resolve-commit → commit-to-gate.
 */

export interface GateDeps extends CreateRunDeps {
  log: Logger;
  /** Reads the specs the App registers, and those its policy compares, off the event loop. */
  specReader: SpecReader;
  octokitFor(installationId: number): Promise<ProbotOctokit>;
  /** How soon a commit whose agent was not ready is gated again. */
  waitRetryMs: number;
}

/** A commit to gate, as a webhook names it. */
export interface CommitToGate {
  installationId: number;
  repository: { id: number; full_name: string };
  headSha: string;
  /**
   * The base branch's commit the head is judged against, whose `.assure/` is the policy: a pull
   * request's base, or the default branch's tip for a commit no pull request names; null for a
   * commit of the default branch (a baseline).
   */
  baseSha: string | null;
  /**
   * The commit whose `.assure/` is the policy, when it is not `baseSha`: the default branch's tip
   * for a pull request into another branch — a pull request does not choose its own policy by
   * choosing its base.
   */
  policySha?: string | null | undefined;
  /** `refs/heads/<branch>` of the head, when known. */
  ref: string | null;
  pullRequest: number | null;
  /** Whether it is the head of a pull request from a fork. */
  fork: boolean;
  /** Start the commit's runs again (a re-run): a new attempt. */
  rerun: boolean;
}

/** A commit to gate, as its job carries it. */
export const CommitToGatePayload = z.object({
  installationId: z.number().int(),
  repository: z.object({ id: z.number().int(), full_name: z.string() }),
  headSha: z.string(),
  baseSha: z.string().nullable(),
  policySha: z.string().nullable().optional(),
  ref: z.string().nullable(),
  pullRequest: z.number().int().nullable(),
  fork: z.boolean(),
  rerun: z.boolean(),
}) satisfies z.ZodType<CommitToGate>;

/** The source a commit's runs carry: it fills the environments' URL templates. */
export function sourceOf(commit: CommitToGate): RunSource {
  return {
    repository: commit.repository.full_name,
    commit_sha: commit.headSha,
    ...(commit.ref ? { ref: commit.ref } : {}),
    ...(commit.pullRequest ? { pull_request: commit.pullRequest } : {}),
  };
}
