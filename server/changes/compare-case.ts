import {
  compareRates,
  compareScores,
  type PassCount,
  type RateComparison,
  type ScoreComparison,
} from "./statistics.js";

/** What a case did in one run (or decision): passes over repeats, and its judged scores if it has any. */
export interface CaseSamples extends PassCount {
  scores?: readonly number[] | undefined;
}

export type CaseClass = "regressed" | "improved" | "unchanged" | "inconclusive" | "new" | "removed";

/** A gate's `no_regression`: a drop larger than `max_drop` with p below 1 − `confidence` is a regression. */
export interface NoRegression {
  max_drop: number;
  confidence: number;
}

export interface CaseChange {
  class: CaseClass;
  base: CaseSamples | null;
  head: CaseSamples | null;
  /** Fisher's exact test of the pass rates. */
  rates: RateComparison | null;
  /** The Mann–Whitney U test of the judged scores, when both sides have some. */
  scores: (ScoreComparison & { drop: number }) | null;
  /**
   * For an inconclusive drop: how many more repeats on each side, at the rates observed, would make
   * it significant (null: none within 1,000). Both sides: a base of few repeats limits what any
   * number of head repeats can show.
   */
  moreRepeatsToSettle: number | null;
}

const rateOf = ({ passes, runs }: PassCount) => (runs === 0 ? 0 : passes / runs);
const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
const MAX_MORE_REPEATS = 1000;

/**
 * Compares a case on the base branch with the same case (same version) at the head. A drop beyond
 * `max_drop` that is significant is a regression; a significant rise beyond it an improvement; a
 * drop beyond it that is not significant is inconclusive, with how many more head repeats would
 * settle it; anything else is unchanged.
 */
export function compareCase(
  base: CaseSamples | null,
  head: CaseSamples | null,
  { max_drop, confidence }: NoRegression,
): CaseChange {
  const none = { rates: null, scores: null, moreRepeatsToSettle: null };
  if (!base && !head) throw new Error("a case is on one side at least");
  if (!base) return { class: "new", base: null, head, ...none };
  if (!head) return { class: "removed", base, head: null, ...none };
  const alpha = 1 - confidence;
  const rates = compareRates(base, head);
  const rateDrop = rateOf(base) - rateOf(head);
  const scored =
    base.scores?.length && head.scores?.length
      ? { ...compareScores(base.scores, head.scores), drop: mean(base.scores) - mean(head.scores) }
      : null;

  const regressed =
    (rateDrop > max_drop && rates.pLower < alpha) ||
    (scored !== null && scored.drop > max_drop && scored.pLower < alpha);
  const improved =
    (-rateDrop > max_drop && rates.pHigher < alpha) ||
    (scored !== null && -scored.drop > max_drop && scored.pHigher < alpha);
  if (regressed) return { class: "regressed", base, head, rates, scores: scored, moreRepeatsToSettle: null };
  if (improved) return { class: "improved", base, head, rates, scores: scored, moreRepeatsToSettle: null };
  const dropped = rateDrop > max_drop || (scored !== null && scored.drop > max_drop);
  if (!dropped) return { class: "unchanged", base, head, rates, scores: scored, moreRepeatsToSettle: null };
  return {
    class: "inconclusive",
    base,
    head,
    rates,
    scores: scored,
    moreRepeatsToSettle: rateDrop > max_drop ? repeatsToSettle(base, head, alpha) : null,
  };
}

/** More repeats on each side that would make the rate's drop significant if both kept their observed rates. */
function repeatsToSettle(base: PassCount, head: PassCount, alpha: number): number | null {
  const grown = ({ passes, runs }: PassCount, more: number) => ({
    passes: Math.round((passes / runs) * (runs + more)),
    runs: runs + more,
  });
  const settles = (more: number) => compareRates(grown(base, more), grown(head, more)).pLower < alpha;
  if (!settles(MAX_MORE_REPEATS)) return null;
  // The p-value falls as both samples grow at fixed rates (rounding aside): the least that settles it, by bisection.
  let low = 0;
  let high = MAX_MORE_REPEATS;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (settles(middle)) high = middle;
    else low = middle;
  }
  return high;
}
