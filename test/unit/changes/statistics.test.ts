import { describe, expect, it } from "@jest/globals";
import { compareRates, compareScores } from "../../../server/changes/statistics.js";

/** C(n, k), exactly enough for these sizes. */
const choose = (n: number, k: number): number =>
  k < 0 || k > n ? 0 : k === 0 ? 1 : (choose(n, k - 1) * (n - k + 1)) / k;

/** Mid-ranks of the pooled values, by counting: how many are smaller, and how many equal. */
const midRanks = (values: number[]) =>
  values.map((v) => values.filter((w) => w < v).length + (values.filter((w) => w === v).length + 1) / 2);

/** Every way to split the pooled ranks into head and base, counting those whose head rank sum is at most / at least the observed one. */
function permutationP(base: number[], head: number[]) {
  const pooled = midRanks([...head, ...base]);
  const stat = (inHead: number[]) => inHead.reduce((sum, i) => sum + pooled[i]!, 0);
  const observed = stat(head.map((_, i) => i));
  let lower = 0;
  let higher = 0;
  let all = 0;
  const pick = (start: number, chosen: number[]) => {
    if (chosen.length === head.length) {
      all++;
      const s = stat(chosen);
      if (s <= observed + 1e-9) lower++;
      if (s >= observed - 1e-9) higher++;
      return;
    }
    for (let i = start; i < pooled.length; i++) pick(i + 1, [...chosen, i]);
  };
  pick(0, []);
  return { lower: lower / all, higher: higher / all };
}

describe("Fisher's exact test of pass rates, one-sided", () => {
  it("gives Fisher's lady tasting tea: 3 of 4 right against chance, p = 17/70", () => {
    // The head (the lady) passes 3 of 4, the base 1 of 4: is the head better?
    expect(compareRates({ passes: 1, runs: 4 }, { passes: 3, runs: 4 }).pHigher).toBeCloseTo(17 / 70, 12);
  });

  it("gives the textbook dieting table's one-sided p (1 of 12 against 9 of 12): 0.00138", () => {
    const result = compareRates({ passes: 9, runs: 12 }, { passes: 1, runs: 12 });
    // P(X ≤ 1) for X ~ Hypergeometric(24, 10, 12): (C(10,0)C(14,12) + C(10,1)C(14,11)) / C(24,12) = 3731/2704156.
    expect(result.pLower).toBeCloseTo(
      (choose(10, 0) * choose(14, 12) + choose(10, 1) * choose(14, 11)) / choose(24, 12),
      12,
    );
    expect(result.pLower).toBeCloseTo(0.00138, 5);
    expect(result.effect).toBeCloseTo(1 / 12 - 9 / 12, 12);
  });

  it("finds nothing to say when the rates are equal, and a clear drop significant", () => {
    expect(compareRates({ passes: 5, runs: 5 }, { passes: 5, runs: 5 })).toEqual({ effect: 0, pLower: 1, pHigher: 1 });
    expect(compareRates({ passes: 10, runs: 10 }, { passes: 2, runs: 10 }).pLower).toBeLessThan(0.001);
    expect(compareRates({ passes: 5, runs: 5 }, { passes: 4, runs: 5 }).pLower).toBeCloseTo(0.5, 12); // one failure in five: no evidence
  });
});

describe("the Mann–Whitney U test of judged scores, one-sided", () => {
  it("gives SciPy's documented example: U = 17 for the males, exact two-sided p = 1/9", () => {
    const males = [19, 22, 16, 29, 24];
    const females = [20, 11, 17, 12];
    const result = compareScores(females, males);
    expect(result.u).toBe(17);
    expect(result.method).toBe("exact");
    expect(2 * Math.min(result.pLower, result.pHigher)).toBeCloseTo(1 / 9, 12);
  });

  it("agrees with every rearrangement of the samples, exactly without ties", () => {
    const base = [0.9, 0.85, 0.7, 0.95, 0.8];
    const head = [0.6, 0.75, 0.5, 0.88];
    const expected = permutationP(base, head);
    const result = compareScores(base, head);
    expect(result.pLower).toBeCloseTo(expected.lower, 12);
    expect(result.pHigher).toBeCloseTo(expected.higher, 12);
    expect(result.effect).toBeLessThan(0);
  });

  it("uses the normal approximation with tie and continuity corrections when scores tie, close to the permutation test", () => {
    const base = [1, 1, 0.8, 0.8, 1, 0.6, 1, 0.8];
    const head = [0.6, 0.8, 0.4, 0.6, 0.8, 0.6, 1, 0.4];
    const result = compareScores(base, head);
    expect(result.method).toBe("asymptotic");
    const expected = permutationP(base, head);
    expect(result.pLower).toBeGreaterThan(expected.lower * 0.7);
    expect(result.pLower).toBeLessThan(expected.lower * 1.4);
    expect(result.pLower).toBeLessThan(0.05);
  });

  it("finds identical samples unchanged", () => {
    const same = compareScores([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]);
    expect(same).toMatchObject({ effect: 0, pLower: 1, pHigher: 1 });
  });
});
