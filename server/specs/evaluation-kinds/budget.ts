import { defineEvaluationKind } from "./define.js";

/** The run's budget, `defaults.budget` (`budget.tokens`, `budget.cost_usd`): run-wide, no cases. */
export const budget = defineEvaluationKind({ name: "budget", prefix: "budget." });
