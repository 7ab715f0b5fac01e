import type { Scenario, TestSpecDocument } from "../document-shape.js";
import { budget } from "./budget.js";
import type { EvaluationKind, KindCases } from "./define.js";
import { detector } from "./detector.js";
import { expectation } from "./expectation.js";
import { metric } from "./metric.js";
import { probe } from "./probe.js";

/** Every kind of evaluation, in the order the contract lists them. */
export const EVALUATION_KINDS = [expectation, metric, probe, detector, budget] as const;

type Kind = (typeof EVALUATION_KINDS)[number];
export type EvaluationKindName = Kind["name"];
export const EVALUATION_KIND_NAMES = EVALUATION_KINDS.map((kind) => kind.name) as [
  EvaluationKindName,
  ...EvaluationKindName[],
];

/**
 * How the service names the evaluations it makes itself, by their kind: `expect.tool_called`,
 * `probe.<probe id>`, `detector.<name>` (a spec metric is named by its own id).
 */
export const EVALUATION_PREFIXES = Object.fromEntries(
  EVALUATION_KINDS.flatMap((kind) => (kind.prefix === null ? [] : [[kind.name, kind.prefix]])),
) as { readonly [K in Kind as K["prefix"] extends string ? K["name"] : never]: K["prefix"] };

const CASES = new Map<string, KindCases>(
  EVALUATION_KINDS.flatMap((kind: EvaluationKind) => (kind.cases ? [[kind.name, kind.cases]] : [])),
);

/** The kinds whose evaluations are compared with the base branch's, case by case. */
export const CASE_KINDS = [...CASES.keys()] as EvaluationKindName[];

/**
 * A case: one check of one scenario (a table's row counts as a scenario) or one security probe —
 * what a run's evaluations are grouped by when a head is compared with its base.
 */
export interface SpecCase {
  /** Stable across versions of the spec: the scenario (or probe) id and where the check is in it. */
  case_id: string;
  kind: EvaluationKindName;
  scenario_id: string;
  /** A metric case's metric; null for the others. */
  metric_id: string | null;
  spec_path: string;
  /**
   * `sha256:` of the case's expanded definition — the conversation it holds (system prompt, user
   * turns, step limit, the tools' mocks as filled for its row) and the check — not of the file:
   * editing another case, or formatting the file, leaves it the same case.
   */
  version: string;
}

/** A check of a spec and the case it makes, before it is versioned: what it checks, as its kind says. */
export type CaseCheck = Omit<SpecCase, "version"> & { check: unknown; definition: unknown };

/**
 * The id of a case, stable across versions of the spec: the scenario's (or probe's) id and what its
 * kind names it by — `<scenario> turns[1].expect[0]`, `<scenario> expect[0]`, `<scenario> metric <id>`,
 * `<probe> probe`. Built here only.
 */
const caseId = (subject: string, locator: string) => `${subject} ${locator}`;

/** The checks of one scenario, every kind's, in the spec's order; `id` names it (a table's row: `refund[A-1]`). */
export function* scenarioChecks(scenario: Scenario, index: number, id: string): Generator<CaseCheck> {
  for (const [kind, cases] of CASES) {
    for (const check of cases.inScenario?.(scenario) ?? []) {
      yield {
        case_id: caseId(id, check.locator),
        kind: kind as EvaluationKindName,
        scenario_id: id,
        metric_id: check.metric_id ?? null,
        spec_path: `scenarios[${index}].${check.where}`,
        check: check.check,
        definition: check.definition,
      };
    }
  }
}

/** The checks written outside the scenarios (the probes), every kind's, in the spec's order. */
export function* standaloneChecks(spec: TestSpecDocument): Generator<CaseCheck> {
  for (const [kind, cases] of CASES) {
    for (const check of cases.inSpec?.(spec) ?? []) {
      yield {
        case_id: caseId(check.subject, check.locator),
        kind: kind as EvaluationKindName,
        scenario_id: check.subject,
        metric_id: null,
        spec_path: check.spec_path,
        check: check.check,
        definition: check.definition,
      };
    }
  }
}

/** What an evaluation says of where it was made. */
export interface PlacedEvaluation {
  kind: string;
  scenario_id: string | null;
  metric_id: string;
  spec_path: string | null;
}

/** The case an evaluation belongs to, as `scenarioChecks` and `standaloneChecks` name it; none for run-wide kinds. */
export function caseOf(evaluation: PlacedEvaluation): string | undefined {
  const { scenario_id, spec_path } = evaluation;
  if (scenario_id === null) return undefined;
  const where = spec_path === null ? null : spec_path.replace(/^scenarios\[\d+\]\./, "");
  const locator = CASES.get(evaluation.kind)?.locatorOf({ metric_id: evaluation.metric_id, where });
  return locator === undefined ? undefined : caseId(scenario_id, locator);
}

/** Whether a kind's cases compare scores too, not only whether they passed. */
export const isScored = (kind: string) => CASES.get(kind)?.scored === true;

/** Whether a policy change says so when a check of this kind is removed from a scenario that stays. */
export const reportsRemoval = (kind: string) => CASES.get(kind)?.reportsRemoval === true;
