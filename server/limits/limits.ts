import { ApiError } from "../errors.js";
import { inMemoryLimiter, makeRateLimit, type LimiterOf, type RateLimit, type RateLimitOutcome } from "./rate-limit.js";

/** The limits as configured (ASSURE_* variables; docs/api.md "Limits"). 0 turns a rate limit off. */
export interface LimitSettings {
  perKeyPerMinute: number;
  unauthenticatedPerMinute: number;
  publicPerMinute: number;
  githubWebhooksPerMinute: number;
  runCreatesPerMinute: number;
  maxQueuedRuns: number;
}

/** The service's budgets, one per door; undefined where that limit is off. */
export interface Limits {
  /** Requests to the API per credential (API key). */
  perKey: RateLimit | undefined;
  /** Requests without a valid key, per client address: guessing keys is slow. */
  unauthenticated: RateLimit | undefined;
  /** Pages, badges and health checks, per client address. */
  public: RateLimit | undefined;
  /** GitHub's webhook deliveries to the App, per sending address. */
  githubWebhooks: RateLimit | undefined;
  /** Runs created per project, by the API, the App and the Action alike. */
  runCreates: RateLimit | undefined;
  /** Runs QUEUED or RUNNING at once per project. */
  maxQueuedRuns: number;
}

/** The counter of the limit called `name`: its keys kept apart from the other limits'. */
export type LimiterFor = (name: string) => LimiterOf;

/** The limits, counted in this process's memory unless `limiterFor` counts them where every node does. */
export function makeLimits(settings: LimitSettings, limiterFor: LimiterFor = () => inMemoryLimiter): Limits {
  return {
    perKey: makeRateLimit(settings.perKeyPerMinute, limiterFor("per-key")),
    unauthenticated: makeRateLimit(settings.unauthenticatedPerMinute, limiterFor("unauthenticated")),
    public: makeRateLimit(settings.publicPerMinute, limiterFor("public")),
    githubWebhooks: makeRateLimit(settings.githubWebhooksPerMinute, limiterFor("github-webhooks")),
    runCreates: makeRateLimit(settings.runCreatesPerMinute, limiterFor("run-creates")),
    maxQueuedRuns: settings.maxQueuedRuns,
  };
}

/** Limits that never refuse: for hosts and tests that set none. */
export const NO_LIMITS: Limits = {
  perKey: undefined,
  unauthenticated: undefined,
  public: undefined,
  githubWebhooks: undefined,
  runCreates: undefined,
  maxQueuedRuns: Number.POSITIVE_INFINITY,
};

/**
 * The headers that report a budget, GitHub's trio: the limit, what is left of it, and when it is
 * full again (UTC epoch seconds). A refusal adds Retry-After (seconds).
 */
export function rateLimitHeaders(outcome: RateLimitOutcome, nowMs: number): Record<string, string> {
  return {
    "x-ratelimit-limit": String(outcome.limit),
    "x-ratelimit-remaining": String(outcome.remaining),
    "x-ratelimit-reset": String(Math.ceil(nowMs / 1000) + outcome.resetSeconds),
    ...(outcome.allowed ? {} : { "retry-after": String(outcome.resetSeconds) }),
  };
}

/** Takes one from `limit` for `key`: the outcome (for its headers), or RATE_LIMITED when none is left. */
export async function spend(
  limit: RateLimit | undefined,
  key: string,
  what: string,
  nowMs: number,
): Promise<RateLimitOutcome | undefined> {
  if (!limit) return undefined;
  const outcome = await limit.take(key);
  if (!outcome.allowed) {
    throw new ApiError("RATE_LIMITED", {
      message: `Too many ${what}: at most ${outcome.limit} a minute. Retry after ${outcome.resetSeconds} s.`,
      headers: rateLimitHeaders(outcome, nowMs),
    });
  }
  return outcome;
}
