import hypergeometricCdf from "@stdlib/stats-base-dists-hypergeometric-cdf";
import normalCdf from "@stdlib/stats-base-dists-normal-cdf";

/**
 * The tests that say whether a case got worse between the base branch and a pull request's head:
 * a pass rate over repeats (Fisher's exact test) and judged scores (Mann–Whitney U), one-sided.
 * The distributions come from stdlib; what is computed here is the statistic.
 */

/** A pass rate observed over repeats. */
export interface PassCount {
  passes: number;
  runs: number;
}

export interface RateComparison {
  /** Head's rate minus base's: negative when the head passes less often. */
  effect: number;
  /** One-sided p-value that the head's rate is lower than the base's (Fisher's exact test). */
  pLower: number;
  /** One-sided p-value that the head's rate is higher. */
  pHigher: number;
}

/**
 * Fisher's exact test on the 2×2 table (head passes, head failures / base passes, base failures),
 * one-sided each way: with the margins fixed, the head's passes follow a hypergeometric
 * distribution, and the p-value is its tail at the observed count.
 */
export function compareRates(base: PassCount, head: PassCount): RateComparison {
  const total = base.runs + head.runs;
  const passes = base.passes + head.passes;
  const rate = ({ passes: p, runs }: PassCount) => (runs === 0 ? 0 : p / runs);
  if (base.runs === 0 || head.runs === 0) return { effect: rate(head) - rate(base), pLower: 1, pHigher: 1 };
  const pLower = hypergeometricCdf(head.passes, total, passes, head.runs);
  const pHigher = head.passes === 0 ? 1 : 1 - hypergeometricCdf(head.passes - 1, total, passes, head.runs);
  return { effect: rate(head) - rate(base), pLower: clamp(pLower), pHigher: clamp(pHigher) };
}

export interface ScoreComparison {
  /** U of the head's sample: how many (head, base) pairs the head wins, ties counting a half. */
  u: number;
  /** The common-language effect: the chance a head score beats a base score, minus ½ (negative: the head is worse). */
  effect: number;
  /** One-sided p-value that the head's scores are stochastically lower. */
  pLower: number;
  pHigher: number;
  /** Exact (small samples without ties) or the normal approximation with tie and continuity corrections. */
  method: "exact" | "asymptotic";
}

/** Below this many samples on each side and without ties, the exact null distribution of U is used (as SciPy's "auto"). */
const EXACT_BELOW = 8;

/** The Mann–Whitney U test of the head's scores against the base's, one-sided each way. */
export function compareScores(base: readonly number[], head: readonly number[]): ScoreComparison {
  const m = head.length;
  const n = base.length;
  if (m === 0 || n === 0) return { u: 0, effect: 0, pLower: 1, pHigher: 1, method: "exact" };
  const { ranks, tieGroups } = rank([...head, ...base]);
  const headRankSum = ranks.slice(0, m).reduce((sum, r) => sum + r, 0);
  const u = headRankSum - (m * (m + 1)) / 2;
  const effect = u / (m * n) - 0.5;
  if (m < EXACT_BELOW && n < EXACT_BELOW && tieGroups.length === 0) {
    const counts = exactUDistribution(m, n);
    const all = counts.reduce((sum, c) => sum + c, 0);
    const atMost = counts.slice(0, u + 1).reduce((sum, c) => sum + c, 0);
    const atLeast = counts.slice(u).reduce((sum, c) => sum + c, 0);
    return { u, effect, pLower: atMost / all, pHigher: atLeast / all, method: "exact" };
  }
  const mean = (m * n) / 2;
  const tieTerm = tieGroups.reduce((sum, t) => sum + (t ** 3 - t), 0);
  const size = m + n;
  const variance = ((m * n) / 12) * (size + 1 - tieTerm / (size * (size - 1)));
  if (variance <= 0) return { u, effect, pLower: 1, pHigher: 1, method: "asymptotic" };
  const sd = Math.sqrt(variance);
  const pLower = normalCdf((u - mean + 0.5) / sd, 0, 1);
  const pHigher = 1 - normalCdf((u - mean - 0.5) / sd, 0, 1);
  return { u, effect, pLower: clamp(pLower), pHigher: clamp(pHigher), method: "asymptotic" };
}

/** Mid-ranks from 1 (ties share the mean of their ranks), and the size of each group of ties. */
function rank(values: readonly number[]): { ranks: number[]; tieGroups: number[] } {
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => a.value - b.value);
  const ranks = new Array<number>(values.length);
  const tieGroups: number[] = [];
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.value === order[start]!.value) end++;
    const mid = (start + end) / 2 + 1;
    for (let i = start; i <= end; i++) ranks[order[i]!.index] = mid;
    if (end > start) tieGroups.push(end - start + 1);
    start = end + 1;
  }
  return { ranks, tieGroups };
}

/**
 * How many of the C(m+n, m) equally likely arrangements give each U = 0 … m·n, under the null
 * (no ties): the number of ways f(m, n, u) satisfies f(m, n, u) = f(m−1, n, u−n) + f(m, n−1, u).
 */
function exactUDistribution(m: number, n: number): number[] {
  // table[i][j] is the distribution for samples of sizes i and j.
  const table: number[][][] = [];
  for (let i = 0; i <= m; i++) {
    table.push([]);
    for (let j = 0; j <= n; j++) {
      if (i === 0 || j === 0) {
        table[i]!.push([1]);
        continue;
      }
      const counts = new Array<number>(i * j + 1).fill(0);
      const withoutHead = table[i - 1]![j]!; // the largest value is a head score: it beats all j base scores
      const withoutBase = table[i]![j - 1]!;
      withoutHead.forEach((c, u) => (counts[u + j]! += c));
      withoutBase.forEach((c, u) => (counts[u]! += c));
      table[i]!.push(counts);
    }
  }
  return table[m]![n]!;
}

const clamp = (p: number) => Math.min(1, Math.max(0, p));
