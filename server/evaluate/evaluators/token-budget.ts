import { EVALUATION_PREFIXES } from "../../contract/index.js";
import { costOf } from "../../usage/agent-usage.js";
import { MAX_FINDING_REFS, type EvaluationDraft, type Evaluator } from "../evaluator.js";

export const BUDGET_JUDGE = { provider: "assure", model: "token-budget@1" } as const;

/**
 * The run's budget (`defaults.budget`): one run-wide evaluation for its tokens, one for its cost,
 * from what every answer of the agent reported (every try of every conversation, the interrupted
 * ones included). An answer without usage, or a model without a price, leaves them unknown — never
 * zero — and the budget inconclusive. (A run that reaches its budget stops before it is evaluated:
 * it fails with cause budget_exceeded.)
 */
export const tokenBudget: Evaluator = {
  kind: "budget",
  async evaluate({ spec, conversations, usage, pricing = {} }) {
    const budget = spec.defaults?.budget;
    if (!budget) return { evaluations: [], findings: [] };
    const scanned: string[] = [];
    const unreported: string[] = [];
    for await (const held of conversations.all()) {
      if (scanned.length < MAX_FINDING_REFS) scanned.push(held.ref.conversation());
      for (const reply of held.facts.replies) {
        if (reply.tokens === null && unreported.length < MAX_FINDING_REFS) {
          unreported.push(held.ref.event(reply.sequence));
        }
      }
    }
    const evaluation = (
      metric: string,
      path: string,
      status: "passed" | "failed" | "inconclusive",
      reason: string,
      refs: string[],
    ): EvaluationDraft => ({
      metric_id: `${EVALUATION_PREFIXES.budget}${metric}`,
      scope: "run",
      scenario_id: null,
      conversation_id: null,
      turn: null,
      spec_path: path,
      score: status === "passed" ? 1 : 0,
      threshold: 1,
      status,
      judge: { ...BUDGET_JUDGE },
      reason,
      evidence_refs: refs,
    });
    const evaluations: EvaluationDraft[] = [];
    if (budget.max_tokens !== undefined) {
      const path = "defaults.budget.max_tokens";
      if (!usage) {
        evaluations.push(evaluation("tokens", path, "inconclusive", "the agent's usage was not measured", []));
      } else if (usage.answers_without_usage > 0) {
        evaluations.push(
          evaluation(
            "tokens",
            path,
            "inconclusive",
            `${usage.answers_without_usage} of ${usage.answers} answer(s) reported no token usage: the budget of ${budget.max_tokens} tokens cannot be checked (${usage.total_tokens} reported)`,
            unreported,
          ),
        );
      } else {
        const within = usage.total_tokens < budget.max_tokens;
        evaluations.push(
          evaluation(
            "tokens",
            path,
            within ? "passed" : "failed",
            `the agent used ${usage.total_tokens} of ${budget.max_tokens} tokens over ${usage.answers} answer(s)`,
            scanned,
          ),
        );
      }
    }
    if (budget.max_cost_usd !== undefined) {
      const path = "defaults.budget.max_cost_usd";
      const cost = usage ? costOf(usage.by_model, pricing) : { usd: null, why: "the agent's usage was not measured" };
      if (cost.usd === null) {
        evaluations.push(
          evaluation(
            "cost_usd",
            path,
            "inconclusive",
            `the budget of $${budget.max_cost_usd} cannot be checked: ${cost.why}`,
            unreported.length > 0 ? unreported : scanned,
          ),
        );
      } else {
        const within = cost.usd < budget.max_cost_usd;
        evaluations.push(
          evaluation(
            "cost_usd",
            path,
            within ? "passed" : "failed",
            `the agent's answers cost $${cost.usd} of $${budget.max_cost_usd} over ${usage!.answers} answer(s)`,
            scanned,
          ),
        );
      }
    }
    return { findings: [], evaluations };
  },
};
