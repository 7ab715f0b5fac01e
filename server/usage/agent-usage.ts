import type { ModelPrice, Pricing } from "../contract/index.js";

/** What the agent's answers naming one model reported of their tokens. */
export interface ModelUsage {
  answers: number;
  /** Answers that reported no total: the totals are a lower bound while there are any. */
  answers_without_usage: number;
  /** Answers that did not report input and output apart: their cost cannot be worked out. */
  answers_without_split: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** The agent's tokens over a run, in all and by the model each answer named (`""`: none). */
export interface AgentUsage extends Omit<ModelUsage, "answers_without_split"> {
  /** Absent from usage measured before it was kept by model. */
  by_model?: Record<string, ModelUsage>;
  /** The 95th percentile of the answers' latency, in ms; null without answers (or measured before it was kept). */
  latency_ms_p95?: number | null;
}

/** The model key of an answer that named none. */
export const NO_MODEL = "";

export type Cost = { usd: number; why: null } | { usd: null; why: string };

/** An answer's price: by the model it names, else the `*` price. */
export const priceOf = (pricing: Pricing, model: string): ModelPrice | undefined => pricing[model] ?? pricing["*"];

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/**
 * What the answers cost at the run's prices. Unknown, never zero, when an answer did not report
 * its input and output tokens or names a model without a price.
 */
export function costOf(byModel: Record<string, ModelUsage> | undefined, pricing: Pricing): Cost {
  if (!byModel) return { usd: null, why: "the usage was measured before it was kept by model" };
  let usd = 0;
  for (const [model, usage] of Object.entries(byModel)) {
    if (usage.answers_without_split > 0) {
      return {
        usd: null,
        why: `${usage.answers_without_split} answer(s)${model ? ` of '${model}'` : ""} did not report their input and output tokens`,
      };
    }
    const price = priceOf(pricing, model);
    if (!price) {
      return {
        usd: null,
        why: `no price for ${model ? `the model '${model}'` : "answers that name no model"} (the environment's endpoint.pricing, or "*")`,
      };
    }
    usd +=
      (usage.input_tokens * price.input_usd_per_million_tokens +
        usage.output_tokens * price.output_usd_per_million_tokens) /
      1e6;
  }
  return { usd: round(usd), why: null };
}

/** A reply as the engine meters it. */
export interface MeteredReply {
  model: string | null;
  usage: { input_tokens: number | null; output_tokens: number | null; total_tokens: number } | null;
}

/** Adds one answer to usage by model (the engine's meter, between what the store has summed). */
export function addAnswer(byModel: Record<string, ModelUsage>, reply: MeteredReply): void {
  const key = reply.model ?? NO_MODEL;
  const usage = (byModel[key] ??= {
    answers: 0,
    answers_without_usage: 0,
    answers_without_split: 0,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
  });
  usage.answers++;
  if (!reply.usage) usage.answers_without_usage++;
  usage.total_tokens += reply.usage?.total_tokens ?? 0;
  if (reply.usage?.input_tokens == null || reply.usage.output_tokens == null) usage.answers_without_split++;
  usage.input_tokens += reply.usage?.input_tokens ?? 0;
  usage.output_tokens += reply.usage?.output_tokens ?? 0;
}

/** Total tokens reported over the models. */
export const totalTokens = (byModel: Record<string, ModelUsage>) =>
  Object.values(byModel).reduce((sum, usage) => sum + usage.total_tokens, 0);

/** What a run's usage comes to, as a change against the base branch compares it. */
export interface UsageFigures {
  tokens: number | null;
  cost_usd: number | null;
  latency_ms_p95: number | null;
}

/** A run's figures: tokens unknown while an answer reported none, cost unknown as `costOf` says. */
export function figuresOf(usage: AgentUsage | null, pricing: Pricing): UsageFigures {
  if (!usage) return { tokens: null, cost_usd: null, latency_ms_p95: null };
  return {
    tokens: usage.answers_without_usage > 0 ? null : usage.total_tokens,
    cost_usd: costOf(usage.by_model, pricing).usd,
    latency_ms_p95: usage.latency_ms_p95 ?? null,
  };
}
