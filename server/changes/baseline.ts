/**
 * The baseline of a pull request's decision: the most recent decision on the base branch at or
 * before the merge base, found walking first parents. Never invented: no decision within `depth`
 * commits, no baseline.
 */

/** `.assure/config.yml` `baseline`, read from the base branch. */
export interface BaselineSettings {
  /** How many first-parent commits from the merge base to look at (the merge base counts). */
  depth: number;
  /** Older than this, the baseline carries a warning. */
  max_age_days: number;
}

export const DEFAULT_BASELINE_SETTINGS: BaselineSettings = { depth: 50, max_age_days: 14 };

/** A commit on the base branch, from the merge base back along first parents, newest first. */
export interface BaseCommit {
  sha: string;
  /** When it was committed. */
  committed_at: string;
}

export interface BaselineDecision {
  decision_id: string;
  commit_sha: string;
}

export type Baseline =
  | {
      found: true;
      decision_id: string;
      commit_sha: string;
      /** First-parent commits between the baseline and the merge base (0: the merge base itself was decided). */
      age_commits: number;
      /** Days from the baseline's commit to the merge base's. */
      age_days: number;
      /** Set when the baseline is older than `max_age_days`. */
      warning: string | null;
    }
  | { found: false; reason: string };

const DAY_MS = 86_400_000;

/**
 * Picks the baseline from the first-parent chain (`chain[0]` is the merge base) and the decisions
 * known for its commits (`decisionOf`): the first commit within `depth` that has one.
 */
export function chooseBaseline(
  chain: readonly BaseCommit[],
  decisionOf: (sha: string) => BaselineDecision | undefined,
  { depth, max_age_days }: BaselineSettings = DEFAULT_BASELINE_SETTINGS,
): Baseline {
  const mergeBase = chain[0];
  if (!mergeBase) return { found: false, reason: "the merge base with the base branch is not known" };
  const looked = chain.slice(0, depth);
  for (const [age, commit] of looked.entries()) {
    const decision = decisionOf(commit.sha);
    if (!decision) continue;
    const ageDays = Math.max(0, (Date.parse(mergeBase.committed_at) - Date.parse(commit.committed_at)) / DAY_MS);
    const rounded = Math.round(ageDays * 10) / 10;
    return {
      found: true,
      decision_id: decision.decision_id,
      commit_sha: commit.sha,
      age_commits: age,
      age_days: rounded,
      warning:
        ageDays > max_age_days
          ? `the baseline ${commit.sha.slice(0, 7)} is ${rounded} days older than the merge base (more than baseline.max_age_days, ${max_age_days}): the comparison may be stale`
          : null,
    };
  }
  return {
    found: false,
    reason: `no decision on the base branch within ${looked.length} commit(s) of the merge base ${mergeBase.sha.slice(0, 7)} (baseline.depth ${depth}): nothing to compare with`,
  };
}
