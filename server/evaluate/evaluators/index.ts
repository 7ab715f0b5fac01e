import type { Evaluator } from "../evaluator.js";
import { judgedMetrics } from "./judged-metrics.js";
import { leakDetectors } from "./leak-detectors.js";
import { scenarioExpectations } from "./scenario-expectations.js";
import { securityProbes } from "./security-probes.js";
import { tokenBudget } from "./token-budget.js";

/** Every family of evaluations a run gets, in the order its evaluations are listed. */
export const EVALUATORS: readonly Evaluator[] = [
  scenarioExpectations,
  securityProbes,
  judgedMetrics,
  leakDetectors,
  tokenBudget,
];
