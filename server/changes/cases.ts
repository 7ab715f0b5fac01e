import { contentAddress } from "../specs/canonical-json.js";
import type { TestSpecDocument } from "../specs/document.js";
import { fillTools, scenarioCases } from "../specs/scenario-cases.js";
import { limitsOf } from "../specs/limits.js";

/**
 * A case: one check of one scenario (a table's row counts as a scenario) or one security probe —
 * what a run's evaluations are grouped by when a head is compared with its base.
 */
export interface SpecCase {
  /** Stable across versions of the spec: the scenario (or probe) id and where the check is in it. */
  case_id: string;
  kind: "expectation" | "metric" | "probe";
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

/**
 * The id of a case, stable across versions of the spec: the scenario's (or probe's) id and where
 * the check is in it — `<scenario> turns[1].expect[0]`, `<scenario> expect[0]`,
 * `<scenario> metric <id>`, `<probe> probe`. Built here only.
 */
export function caseId(
  of:
    | { kind: "expectation"; scenario_id: string; where: string }
    | { kind: "metric"; scenario_id: string; metric_id: string }
    | { kind: "probe"; probe_id: string },
): string {
  if (of.kind === "expectation") return `${of.scenario_id} ${of.where}`;
  if (of.kind === "metric") return `${of.scenario_id} metric ${of.metric_id}`;
  return `${of.probe_id} probe`;
}

/** Every case of a spec, in the spec's order. */
export function* specCases(spec: TestSpecDocument): Generator<SpecCase> {
  const tools = spec.tools ?? [];
  for (const { index: s, id, scenario, row } of scenarioCases(spec)) {
    const conversation = {
      system: scenario.system ?? null,
      turns: scenario.turns.map((turn) => turn.user),
      max_steps: scenario.max_steps ?? limitsOf(spec).max_steps,
      tools: row ? fillTools(tools, row) : tools,
    };
    const versionOf = (check: unknown) => contentAddress({ conversation, check });
    for (const [t, turn] of scenario.turns.entries()) {
      for (const [e, expectation] of (turn.expect ?? []).entries()) {
        const where = `turns[${t}].expect[${e}]`;
        yield {
          case_id: caseId({ kind: "expectation", scenario_id: id, where }),
          kind: "expectation",
          scenario_id: id,
          metric_id: null,
          spec_path: `scenarios[${s}].${where}`,
          version: versionOf({ turn: t + 1, expectation }),
        };
      }
    }
    for (const [e, expectation] of (scenario.expect ?? []).entries()) {
      yield {
        case_id: caseId({ kind: "expectation", scenario_id: id, where: `expect[${e}]` }),
        kind: "expectation",
        scenario_id: id,
        metric_id: null,
        spec_path: `scenarios[${s}].expect[${e}]`,
        version: versionOf({ expectation }),
      };
    }
    for (const [m, metric] of (scenario.metrics ?? []).entries()) {
      yield {
        case_id: caseId({ kind: "metric", scenario_id: id, metric_id: metric.id }),
        kind: "metric",
        scenario_id: id,
        metric_id: metric.id,
        spec_path: `scenarios[${s}].metrics[${m}]`,
        version: versionOf({ metric }),
      };
    }
  }
  for (const [p, probe] of (spec.security ?? []).entries()) {
    yield {
      case_id: caseId({ kind: "probe", probe_id: probe.id }),
      kind: "probe",
      scenario_id: probe.id,
      metric_id: null,
      spec_path: `security[${p}]`,
      version: contentAddress({ probe: { ...probe, repeat: undefined }, tools, max_steps: limitsOf(spec).max_steps }),
    };
  }
}
