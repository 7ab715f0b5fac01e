import { contentAddress } from "../specs/canonical-json.js";
import type { TestSpecDocument } from "../specs/document.js";
import { scenarioChecks, standaloneChecks, type SpecCase } from "../specs/evaluation-kinds/index.js";
import { fillTools, scenarioCases } from "../specs/scenario-cases.js";
import { limitsOf } from "../specs/limits.js";

export type { SpecCase } from "../specs/evaluation-kinds/index.js";

/** Every case of a spec, in the spec's order: each scenario's (each row of a table's), then the probes. */
export function* specCases(spec: TestSpecDocument): Generator<SpecCase> {
  const tools = spec.tools ?? [];
  for (const { index, id, scenario, row } of scenarioCases(spec)) {
    const conversation = {
      system: scenario.system ?? null,
      turns: scenario.turns.map((turn) => turn.user),
      max_steps: scenario.max_steps ?? limitsOf(spec).max_steps,
      tools: row ? fillTools(tools, row) : tools,
    };
    for (const { check, definition: _definition, ...found } of scenarioChecks(scenario, index, id)) {
      yield { ...found, version: contentAddress({ conversation, check }) };
    }
  }
  for (const { check, definition: _definition, ...found } of standaloneChecks(spec)) {
    yield { ...found, version: contentAddress(check) };
  }
}
