import { describe, expect, it } from "@jest/globals";
import { addAnswer, costOf, figuresOf, totalTokens, type ModelUsage } from "../../../server/usage/agent-usage.js";

const PRICES = {
  big: { input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 },
  "*": { input_usd_per_million_tokens: 0.5, output_usd_per_million_tokens: 1.5 },
};
const answer = (model: string | null, input: number | null, output: number | null) => ({
  model,
  usage:
    input === null && output === null
      ? null
      : { input_tokens: input, output_tokens: output, total_tokens: (input ?? 0) + (output ?? 0) },
});

describe("the agent's usage and what it cost", () => {
  it("sums each model's answers, and prices them by the model they name, else by '*'", () => {
    const byModel: Record<string, ModelUsage> = {};
    addAnswer(byModel, answer("big", 1_000_000, 100_000));
    addAnswer(byModel, answer("big", 500_000, 0));
    addAnswer(byModel, answer("small", 2_000_000, 1_000_000));
    expect(byModel.big).toEqual({
      answers: 2,
      answers_without_usage: 0,
      answers_without_split: 0,
      input_tokens: 1_500_000,
      output_tokens: 100_000,
      total_tokens: 1_600_000,
    });
    expect(totalTokens(byModel)).toBe(4_600_000);
    // big: 1.5 M × $3 + 0.1 M × $15 = $6; small at '*': 2 M × $0.5 + 1 M × $1.5 = $2.5.
    expect(costOf(byModel, PRICES)).toEqual({ usd: 8.5, why: null });
  });

  it("leaves the cost unknown, never zero, without a price or without input and output apart", () => {
    const byModel: Record<string, ModelUsage> = {};
    addAnswer(byModel, answer("small", 10, 10));
    expect(costOf(byModel, { big: PRICES.big })).toEqual({
      usd: null,
      why: `no price for the model 'small' (the environment's endpoint.pricing, or "*")`,
    });
    addAnswer(byModel, answer(null, null, null));
    expect(byModel[""]).toMatchObject({ answers: 1, answers_without_usage: 1, answers_without_split: 1 });
    expect(costOf(byModel, PRICES)).toEqual({
      usd: null,
      why: "1 answer(s) did not report their input and output tokens",
    });
    expect(costOf(undefined, PRICES).usd).toBeNull();
    expect(costOf({}, {})).toEqual({ usd: 0, why: null }); // no answer costs nothing
  });

  it("gives a run's figures: tokens unknown while an answer reported none", () => {
    const byModel: Record<string, ModelUsage> = {};
    addAnswer(byModel, answer("big", 100, 50));
    const usage = {
      answers: 1,
      answers_without_usage: 0,
      input_tokens: 100,
      output_tokens: 50,
      total_tokens: 150,
      by_model: byModel,
      latency_ms_p95: 12,
    };
    expect(figuresOf(usage, PRICES)).toEqual({ tokens: 150, cost_usd: 0.00105, latency_ms_p95: 12 });
    expect(figuresOf({ ...usage, answers_without_usage: 1 }, PRICES).tokens).toBeNull();
    expect(figuresOf(null, PRICES)).toEqual({ tokens: null, cost_usd: null, latency_ms_p95: null });
  });
});
