import quantile from "@stdlib/stats-base-dists-normal-quantile";

// A pass rate held against a bar, as a gate's `min_pass_rate` and `confidence` mean it: the Wilson
// score interval. Part of the spec format's meaning, as the expectation kinds' checks are.

/** Inverse of the standard normal CDF. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  return quantile(p, 0, 1);
}

/** Wilson score interval of a pass rate observed as `passes` out of `n`, at a two-sided confidence. */
export function wilsonInterval(passes: number, n: number, confidence: number): { lower: number; upper: number } {
  if (n === 0) return { lower: 0, upper: 1 };
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p = passes / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

export interface RateDecision {
  status: "passed" | "failed" | "inconclusive";
  lower: number;
  upper: number;
  /** When inconclusive: how many samples in all would settle it at the observed rate (null: none would). */
  samplesToSettle: number | null;
}

/**
 * Compares an observed pass rate with a bar at a confidence: passed when the interval's lower
 * bound clears the bar, failed when its upper bound is below it, inconclusive otherwise, with how
 * many samples in all would settle it if the observed rate held (null if no number would).
 */
export function decideRate(passes: number, n: number, bar: number, confidence: number): RateDecision {
  const { lower, upper } = wilsonInterval(passes, n, confidence);
  if (lower >= bar) return { status: "passed", lower, upper, samplesToSettle: null };
  if (upper < bar) return { status: "failed", lower, upper, samplesToSettle: null };
  const rate = n === 0 ? 0 : passes / n;
  let samplesToSettle: number | null = null;
  if (n > 0 && rate !== bar) {
    for (let total = n + 1; total <= 100_000; total++) {
      const interval = wilsonInterval(rate * total, total, confidence);
      if (interval.lower >= bar || interval.upper < bar) {
        samplesToSettle = total;
        break;
      }
    }
  }
  return { status: "inconclusive", lower, upper, samplesToSettle };
}

/** A fraction as people read it: 0.8765 → 87.7%. */
export const percent = (x: number) => `${Math.round(x * 1000) / 10}%`;
