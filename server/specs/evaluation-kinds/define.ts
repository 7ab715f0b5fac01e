import type { Scenario, TestSpecDocument } from "../document-shape.js";

/** One check of a kind written in a scenario: where it is, what names its case, what it checks. */
export interface ScenarioCheck {
  /** Where in its scenario: `turns[1].expect[0]`, `metrics[0]`. */
  where: string;
  /** What names its case after the scenario's id: `turns[1].expect[0]`, `metric task_completion`. */
  locator: string;
  /** The metric its evaluations are named by, when the spec names it (a metric's own id). */
  metric_id?: string;
  /** What the case's version hashes, with the conversation it is made in (as filled for a table's row). */
  check: unknown;
  /** What a policy change compares of it as written (the conversation and the tools are compared apart). */
  definition: unknown;
}

/** One check of a kind written outside the scenarios (a security probe): it holds its conversation. */
export interface StandaloneCheck {
  /** The id its case is named by: the probe's. */
  subject: string;
  locator: string;
  spec_path: string;
  /** What the case's version hashes: everything that makes its conversation and its check. */
  check: unknown;
  definition: unknown;
}

/** Where an evaluation of a kind was made, as it says: enough to find its case. */
export interface EvaluationPlace {
  metric_id: string;
  /** Its spec path within its scenario (`turns[1].expect[0]`); its whole spec path outside one; null if none. */
  where: string | null;
}

/** How a kind's evaluations are grouped into cases, compared with the base branch's case by case. */
export interface KindCases {
  /** Its checks in one scenario (a table's row plays it filled in), in the order they are written. */
  inScenario?(scenario: Scenario): Iterable<ScenarioCheck>;
  /** Its checks outside the scenarios, in the order they are written. */
  inSpec?(spec: TestSpecDocument): Iterable<StandaloneCheck>;
  /** What names the case of one of its evaluations after its scenario's id; undefined: none. */
  locatorOf(evaluation: EvaluationPlace): string | undefined;
  /** Whether its cases' scores are compared too (a judged metric), not only whether they passed. */
  scored?: boolean;
  /**
   * Whether a policy change says so when one of its checks is removed from a scenario that stays:
   * metrics and probes are reported as the entries of the spec they are.
   */
  reportsRemoval?: boolean;
}

/**
 * One kind of evaluation: what made it. Adding a kind is a file that defines one, and a line in
 * `index.ts`; the contract's `EvaluationKind`, the names the service gives its evaluations, the cases
 * a head and its base are compared by (their ids), and what gates cover follow from it.
 */
export interface EvaluationKind<Name extends string = string, Prefix extends string | null = string | null> {
  name: Name;
  /**
   * How the service names the evaluations of this kind it makes itself: `<prefix><what>`
   * (`expect.tool_called`); null when the spec names them (a metric, by its own id). A spec's metric
   * may not take one of these prefixes.
   */
  prefix: Prefix;
  /** Its cases, when its evaluations are compared case by case; none for run-wide kinds (detectors, budget). */
  cases?: KindCases;
}

export function defineEvaluationKind<const Name extends string, const Prefix extends string | null>(
  kind: EvaluationKind<Name, Prefix>,
): EvaluationKind<Name, Prefix> {
  return kind;
}
