import type { TestSpecDocument } from "../contract/index.js";
import type { ServiceStore } from "../store/service-store.js";
import { addAnswer, costOf, totalTokens, type MeteredReply, type ModelUsage } from "../usage/agent-usage.js";

/** A spec's `defaults.budget`: the agent's tokens, and what they cost, that one run may use. */
export type RunBudget = NonNullable<NonNullable<TestSpecDocument["defaults"]>["budget"]>;

export interface BudgetMeter {
  /** Adds one answer of the agent to what the run spent. */
  meter(reply: MeteredReply): void;
  /** Why no conversation may start any more, once the budget is reached; undefined until then (and without a budget). */
  reached(): string | undefined;
}

/**
 * The agent's tokens and what they cost, against the spec's budget: once it is reached, no
 * conversation starts. A cost that cannot be worked out stops nothing; the budget gate says so.
 * A resumed run counts what its earlier conversations spent, as the store has summed it.
 */
export async function makeBudgetMeter(
  store: Pick<ServiceStore, "getRunPricing" | "measureAgentUsage">,
  { runId, budget, resumed }: { runId: string; budget: RunBudget | undefined; resumed: boolean },
): Promise<BudgetMeter> {
  const pricing = budget?.max_cost_usd !== undefined ? await store.getRunPricing(runId) : {};
  const spent: Record<string, ModelUsage> =
    (budget && resumed ? (await store.measureAgentUsage(runId)).by_model : undefined) ?? {};
  return {
    meter(reply) {
      if (budget) addAnswer(spent, reply);
    },
    reached() {
      if (budget?.max_tokens !== undefined && totalTokens(spent) >= budget.max_tokens) {
        return `The agent used ${totalTokens(spent)} tokens, reaching the run's budget of ${budget.max_tokens} (defaults.budget.max_tokens)`;
      }
      const cost = budget?.max_cost_usd !== undefined ? costOf(spent, pricing).usd : null;
      if (cost !== null && cost >= budget!.max_cost_usd!) {
        return `The agent's answers cost $${cost}, reaching the run's budget of $${budget!.max_cost_usd} (defaults.budget.max_cost_usd)`;
      }
      return undefined;
    },
  };
}
