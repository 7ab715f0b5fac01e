import type { Evaluation, TestSpecDocument } from "../contract/index.js";
import { caseOf, isScored } from "../specs/evaluation-kinds/index.js";
import { specCases } from "./cases.js";
import { compareCase, type CaseChange, type CaseSamples, type NoRegression } from "./compare-case.js";

/** What a case's evaluations need to say: enough of a stored evaluation. */
export type CaseEvaluation = Pick<
  Evaluation,
  "kind" | "metric_id" | "scenario_id" | "spec_path" | "status" | "score" | "conversation_id" | "turn"
>;

/** One side of a comparison: a spec version and the evaluations of its runs (several runs: more repeats). */
export interface ComparedSide {
  spec: TestSpecDocument;
  evaluations: readonly CaseEvaluation[];
}

export interface CaseComparison extends CaseChange {
  case_id: string;
  /** The case's version on each side; a case whose definition changed is new at the head (and removed at the base). */
  base_version: string | null;
  head_version: string | null;
}

/**
 * The case an evaluation belongs to, in `specCases`' terms: `<scenario> turns[1].expect[0]`,
 * `<scenario> metric <id>`, `<probe> probe`; none for the run-wide ones (detectors, budget).
 */
export const caseIdOf = (evaluation: CaseEvaluation): string | undefined => caseOf(evaluation);

/**
 * Each case's samples, one per conversation (a repeat): whether it passed (a check judged on
 * several turns passes when every turn does) and, for metrics, its score (the mean over turns).
 * Inconclusive or errored evaluations say nothing. Turns of one conversation are not independent
 * samples: counting them apart would make a drop look more certain than it is.
 */
export function samplesByCase(evaluations: readonly CaseEvaluation[]): Map<string, CaseSamples> {
  const repeats = new Map<string, Map<string, { passed: boolean; scores: number[] }>>();
  for (const evaluation of evaluations) {
    const id = caseIdOf(evaluation);
    if (!id || (evaluation.status !== "passed" && evaluation.status !== "failed")) continue;
    const ofCase = repeats.get(id) ?? new Map<string, { passed: boolean; scores: number[] }>();
    repeats.set(id, ofCase);
    const key = evaluation.conversation_id ?? `#${ofCase.size}`;
    const sample = ofCase.get(key) ?? { passed: true, scores: [] };
    sample.passed &&= evaluation.status === "passed";
    if (isScored(evaluation.kind)) sample.scores.push(evaluation.score);
    ofCase.set(key, sample);
  }
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  return new Map(
    [...repeats].map(([id, ofCase]) => {
      const all = [...ofCase.values()];
      const counts = { passes: all.filter((s) => s.passed).length, runs: all.length };
      const scores = all.filter((s) => s.scores.length > 0).map((s) => mean(s.scores));
      return [id, scores.length > 0 ? { ...counts, scores } : counts];
    }),
  );
}

/**
 * Every case of the base and the head, compared: the same case (id and version) on both sides
 * by its statistics; otherwise new at the head or removed from the base. A probe is a case whose
 * "pass" is not tripping, so one that newly fails is a regression like any other.
 */
export function compareCases(base: ComparedSide, head: ComparedSide, policy: NoRegression): CaseComparison[] {
  const versions = (spec: TestSpecDocument) => new Map([...specCases(spec)].map((c) => [c.case_id, c.version]));
  const baseVersions = versions(base.spec);
  const headVersions = versions(head.spec);
  const baseSamples = samplesByCase(base.evaluations);
  const headSamples = samplesByCase(head.evaluations);
  const comparisons: CaseComparison[] = [];
  for (const [caseId, headVersion] of headVersions) {
    const headSample = headSamples.get(caseId);
    if (!headSample) continue; // not judged at the head: nothing to compare (its gate says why)
    const baseVersion = baseVersions.get(caseId);
    const baseSample = baseVersion === headVersion ? (baseSamples.get(caseId) ?? null) : null;
    comparisons.push({
      case_id: caseId,
      base_version: baseVersion ?? null,
      head_version: headVersion,
      ...compareCase(baseSample, headSample, policy),
    });
  }
  for (const [caseId, baseVersion] of baseVersions) {
    const headVersion = headVersions.get(caseId);
    const baseSample = baseSamples.get(caseId);
    if (headVersion === baseVersion || !baseSample) continue; // compared above, or never judged at the base
    comparisons.push({
      case_id: caseId,
      base_version: baseVersion,
      head_version: headVersion ?? null,
      ...compareCase(baseSample, null, policy),
    });
  }
  return comparisons;
}
