import type { Evaluation, TestSpecDocument } from "../contract/index.js";
import { specCases } from "./cases.js";
import { compareCase, type CaseChange, type CaseSamples, type NoRegression } from "./compare-case.js";

/** What a case's evaluations need to say: enough of a stored evaluation. */
export type CaseEvaluation = Pick<Evaluation, "kind" | "metric_id" | "scenario_id" | "spec_path" | "status" | "score">;

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
export function caseIdOf(evaluation: CaseEvaluation): string | undefined {
  if (evaluation.scenario_id === null) return undefined;
  if (evaluation.kind === "expectation" && evaluation.spec_path) return `${evaluation.scenario_id} ${evaluation.spec_path.replace(/^scenarios\[\d+\]\./, "")}`;
  if (evaluation.kind === "metric") return `${evaluation.scenario_id} metric ${evaluation.metric_id}`;
  if (evaluation.kind === "probe") return `${evaluation.scenario_id} probe`;
  return undefined;
}

/** Each case's samples: judged passes over judged repeats (inconclusive ones say nothing), and metric scores. */
export function samplesByCase(evaluations: readonly CaseEvaluation[]): Map<string, CaseSamples> {
  const samples = new Map<string, { passes: number; runs: number; scores: number[] }>();
  for (const evaluation of evaluations) {
    const id = caseIdOf(evaluation);
    if (!id || (evaluation.status !== "passed" && evaluation.status !== "failed")) continue;
    const sample = samples.get(id) ?? { passes: 0, runs: 0, scores: [] };
    sample.runs++;
    if (evaluation.status === "passed") sample.passes++;
    if (evaluation.kind === "metric") sample.scores.push(evaluation.score);
    samples.set(id, sample);
  }
  return new Map([...samples].map(([id, { scores, ...counts }]) => [id, scores.length > 0 ? { ...counts, scores } : counts]));
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
    comparisons.push({ case_id: caseId, base_version: baseVersion ?? null, head_version: headVersion, ...compareCase(baseSample, headSample, policy) });
  }
  for (const [caseId, baseVersion] of baseVersions) {
    const headVersion = headVersions.get(caseId);
    const baseSample = baseSamples.get(caseId);
    if (headVersion === baseVersion || !baseSample) continue; // compared above, or never judged at the base
    comparisons.push({ case_id: caseId, base_version: baseVersion, head_version: headVersion ?? null, ...compareCase(baseSample, null, policy) });
  }
  return comparisons;
}
