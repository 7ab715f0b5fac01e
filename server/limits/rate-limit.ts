import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

/** What taking one from a budget left: whether it was allowed, and the figures the response reports. */
export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the budget is full again (at least 1). */
  resetSeconds: number;
}

/**
 * A budget of `limit` a minute per key (a credential, a client address, a project). The counting is
 * rate-limiter-flexible's; this interface is what the service sees, so a store shared by several
 * nodes (its Redis, Postgres or SQLite limiters) can take the in-memory one's place.
 */
export interface RateLimit {
  readonly limit: number;
  take(key: string): Promise<RateLimitOutcome>;
}

const WINDOW_SECONDS = 60;

/** Makes the counter of a budget: `points` per `duration` seconds, per key. */
export type LimiterOf = (points: number, duration: number) => RateLimiterAbstract;

/**
 * A per-minute budget, counted in this process's memory unless `limiterOf` counts elsewhere;
 * undefined when `perMinute` is 0 (off).
 */
export function makeRateLimit(perMinute: number, limiterOf: LimiterOf = inMemoryLimiter): RateLimit | undefined {
  if (perMinute <= 0) return undefined;
  const limiter = limiterOf(perMinute, WINDOW_SECONDS);
  const outcome = (allowed: boolean, res: RateLimiterRes): RateLimitOutcome => ({
    allowed,
    limit: perMinute,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });
  return {
    limit: perMinute,
    async take(key) {
      try {
        return outcome(true, await limiter.consume(key));
      } catch (refused) {
        if (refused instanceof RateLimiterRes) return outcome(false, refused);
        throw refused;
      }
    },
  };
}

// Keys idle for a window are dropped, so a flood of addresses cannot grow the map without bound.
export const inMemoryLimiter: LimiterOf = (points, duration) => new RateLimiterMemory({ points, duration });
