import { EVALUATION_PREFIXES } from "../../contract/index.js";
import { MAX_FINDING_REFS, type Evaluator } from "../evaluator.js";

export const BUDGET_JUDGE = { provider: "assure", model: "token-budget@1" } as const;

/**
 * The run's token budget (`defaults.budget.max_tokens`), from what every answer of the agent
 * reported: one run-wide evaluation. An answer without usage leaves the total unknown — never
 * zero — and the budget inconclusive. (A run that reaches its budget stops before it is evaluated:
 * it fails with cause budget_exceeded.)
 */
export const tokenBudget: Evaluator = {
  kind: "budget",
  evaluate({ spec, conversations }) {
    const budget = spec.defaults?.budget;
    if (!budget) return { evaluations: [], findings: [] };
    let used = 0;
    let answers = 0;
    const unreported: string[] = [];
    let unreportedCount = 0;
    const scanned: string[] = [];
    for (const held of conversations.all()) {
      if (scanned.length < MAX_FINDING_REFS) scanned.push(held.ref.conversation());
      for (const reply of held.facts.replies) {
        answers++;
        if (reply.tokens === null) {
          unreportedCount++;
          if (unreported.length < MAX_FINDING_REFS) unreported.push(held.ref.event(reply.sequence));
        } else used += reply.tokens;
      }
    }
    const known = unreportedCount === 0;
    return {
      findings: [],
      evaluations: [
        {
          metric_id: `${EVALUATION_PREFIXES.budget}tokens`,
          scope: "run",
          scenario_id: null,
          conversation_id: null,
          turn: null,
          spec_path: "defaults.budget.max_tokens",
          score: known && used < budget.max_tokens ? 1 : 0,
          threshold: 1,
          status: known ? (used < budget.max_tokens ? "passed" : "failed") : "inconclusive",
          judge: { ...BUDGET_JUDGE },
          reason: known
            ? `the agent used ${used} of ${budget.max_tokens} tokens over ${answers} answer(s)`
            : `${unreportedCount} of ${answers} answer(s) reported no token usage: the budget of ${budget.max_tokens} tokens cannot be checked (${used} reported)`,
          evidence_refs: known ? scanned : unreported,
        },
      ],
    };
  },
};
