import type { Scenario, TestSpecDocument, Tool } from "./document-shape.js";
import { TEMPLATED_SCENARIO_FIELDS, fillPlaceholders, rowKey, rowScenarioId, type VarsRow } from "./vars.js";

/** A scenario as its conversations play it: itself, or one row of its table filled in. */
export interface ScenarioCase {
  /** Its place in the spec's `scenarios`: where its parts are written (`scenarios[2].expect[0]`). */
  index: number;
  /** The scenario's id, with the row's key for a row of a table: `refund[A-1001]`. */
  id: string;
  scenario: Scenario;
  /** The row it plays, if the scenario has a table. */
  row: VarsRow | undefined;
}

/** A scenario with a row of its table filled in. */
export function fillScenario(scenario: Scenario, row: VarsRow): Scenario {
  const filled: Scenario = { ...scenario };
  for (const field of TEMPLATED_SCENARIO_FIELDS) {
    if (scenario[field] !== undefined) {
      (filled as Record<string, unknown>)[field] = fillPlaceholders(scenario[field], row);
    }
  }
  return filled;
}

/** The tools with their mocks' `when` and `return` filled from a row. */
export function fillTools(tools: readonly Tool[], row: VarsRow): Tool[] {
  return tools.map((tool) =>
    tool.mock ? { ...tool, mock: tool.mock.map((mock) => fillPlaceholders(mock, row)) } : tool,
  );
}

/**
 * Every scenario of a spec as its conversations play it, in order: a scenario without a table
 * once, one with a table once per row. Made one at a time, as they are asked for.
 */
export function* scenarioCases(spec: Pick<TestSpecDocument, "scenarios">): Generator<ScenarioCase> {
  const scenarios = spec.scenarios ?? [];
  for (let index = 0; index < scenarios.length; index++) {
    const scenario = scenarios[index]!;
    if (!scenario.vars) {
      yield { index, id: scenario.id, scenario, row: undefined };
      continue;
    }
    for (let r = 0; r < scenario.vars.length; r++) {
      const row = scenario.vars[r]!;
      yield { index, id: rowScenarioId(scenario.id, rowKey(row, r)), scenario: fillScenario(scenario, row), row };
    }
  }
}
