import type { CaseFlakiness } from "../contract/index.js";
import { specCases } from "./cases.js";
import { samplesByCase, type ComparedSide } from "./compare-cases.js";

/** `.assure/config.yml` `flaky`, read from the base branch. */
export interface FlakySettings {
  threshold: number;
  mode: "report" | "quarantine";
}

/** One run of a case in the base branch's history: its case version and whether it passed. */
export interface CaseOutcome {
  version: string;
  passed: boolean;
}

/**
 * How often a case flipped between pass and fail in the base branch's recent decisions (oldest
 * first): flips between consecutive outcomes of the same case version, over the pairs compared.
 * Null when there is no pair to compare.
 */
export function flipRate(history: readonly CaseOutcome[]): { rate: number; flips: number; pairs: number } | null {
  let flips = 0;
  let pairs = 0;
  for (let i = 1; i < history.length; i++) {
    const before = history[i - 1]!;
    const after = history[i]!;
    if (before.version !== after.version) continue; // a changed case starts a new history
    pairs++;
    if (before.passed !== after.passed) flips++;
  }
  return pairs === 0 ? null : { rate: flips / pairs, flips, pairs };
}

/** Each case of one run: its version and whether it passed (every repeat passed). */
export function caseOutcomes(side: ComparedSide): Map<string, CaseOutcome> {
  const samples = samplesByCase(side.evaluations);
  const outcomes = new Map<string, CaseOutcome>();
  for (const c of specCases(side.spec)) {
    const sample = samples.get(c.case_id);
    if (sample && sample.runs > 0) {
      outcomes.set(c.case_id, { version: c.version, passed: sample.passes === sample.runs });
    }
  }
  return outcomes;
}

/**
 * The head's cases that are flaky on the base branch: over the history's runs of the same spec and
 * environment (oldest first; null where a decision has no judged run of it), the outcomes of the
 * head's version of each case flip more often than `threshold` — and at least twice: one flip is
 * a step (the case broke, or was fixed), not a flake.
 */
export function measureFlakiness(
  history: readonly (ComparedSide | null)[],
  headVersions: ReadonlyMap<string, string>,
  { threshold, mode }: FlakySettings,
): Map<string, CaseFlakiness> {
  const outcomes = history.map((side) => (side ? caseOutcomes(side) : new Map<string, CaseOutcome>()));
  const flaky = new Map<string, CaseFlakiness>();
  for (const [caseId, version] of headVersions) {
    const seen = outcomes.map((ofRun) => {
      const outcome = ofRun.get(caseId);
      return outcome?.version === version ? outcome : null;
    });
    const rate = flipRate(seen.filter((o): o is CaseOutcome => o !== null));
    if (!rate || rate.flips < 2 || rate.rate <= threshold) continue;
    flaky.set(caseId, {
      flip_rate: Math.round(rate.rate * 1000) / 1000,
      flips: rate.flips,
      pairs: rate.pairs,
      history: seen.map((o) => (o === null ? "·" : o.passed ? "P" : "F")).join(""),
      quarantined: mode === "quarantine",
    });
  }
  return flaky;
}

/** `flaky: flipped 3 of 8 times on the base branch (PFPPF…)`, and whether it is quarantined. */
export function describeFlakiness(f: CaseFlakiness): string {
  return `flaky: flipped ${f.flips} of ${f.pairs} times on the base branch (${f.history})${f.quarantined ? ", quarantined" : ""}`;
}
