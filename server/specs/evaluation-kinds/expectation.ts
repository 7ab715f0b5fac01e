import { defineEvaluationKind, type ScenarioCheck } from "./define.js";

/** A deterministic expectation of a scenario (`expect.tool_called`): a case per expectation, named by where it is. */
export const expectation = defineEvaluationKind({
  name: "expectation",
  prefix: "expect.",
  cases: {
    *inScenario(scenario) {
      for (const [t, turn] of scenario.turns.entries()) {
        for (const [e, expectation] of (turn.expect ?? []).entries()) {
          yield at(`turns[${t}].expect[${e}]`, { turn: t + 1, expectation }, expectation);
        }
      }
      for (const [e, expectation] of (scenario.expect ?? []).entries()) {
        yield at(`expect[${e}]`, { expectation }, expectation);
      }
    },
    locatorOf: ({ where }) => where || undefined,
    reportsRemoval: true,
  },
});

const at = (where: string, check: unknown, definition: unknown): ScenarioCheck => ({
  where,
  locator: where,
  check,
  definition,
});
