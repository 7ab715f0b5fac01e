import { coverage } from "./coverage.js";
import type { GateRequirement, RequireProblem } from "./define.js";
import { expectations } from "./expectations.js";
import { maxFindingSeverity } from "./max-finding-severity.js";
import { metric } from "./metric.js";

/** Every requirement a gate can name, in the order the spec format lists their fields. */
export const GATE_REQUIREMENTS = [expectations, metric, maxFindingSeverity, coverage] as const;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every requirement's fields in a gate's `require`, in the registry's order. */
export const REQUIREMENT_FIELDS = Object.assign({}, ...GATE_REQUIREMENTS.map((r) => r.fields)) as UnionToIntersection<
  (typeof GATE_REQUIREMENTS)[number]["fields"]
>;

const REQUIREMENTS: readonly GateRequirement[] = GATE_REQUIREMENTS;

type Require = Readonly<Record<string, unknown>>;

/** The requirement a gate's `require` names; undefined when it names none (`no_regression` alone). */
export const requirementOf = (require: Require): GateRequirement | undefined =>
  REQUIREMENTS.find((r) => require[r.name] !== undefined);

/**
 * Checks a gate's `require`: one requirement at most, and `no_regression` when none; each
 * requirement's other fields only beside it; the named one's own checks.
 */
export function checkRequire(require: Require, problem: RequireProblem): void {
  const named = REQUIREMENTS.filter((r) => require[r.name] !== undefined);
  if (named.length > 1 || (named.length === 0 && require.no_regression === undefined)) {
    problem([], `require one of: ${REQUIREMENTS.map((r) => r.synopsis ?? r.name).join(", ")} — and/or no_regression`);
    return;
  }
  for (const requirement of REQUIREMENTS) {
    const others = Object.keys(requirement.fields).filter((field) => field !== requirement.name);
    if (require[requirement.name] !== undefined) requirement.refine?.(require, problem);
    else if (others.some((field) => require[field] !== undefined)) {
      problem([], `${others.join(" and ")} go with ${requirement.name}`);
    }
  }
}
