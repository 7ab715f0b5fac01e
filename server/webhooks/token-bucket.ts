/**
 * A token bucket refilled at `perSecond`, holding a tenth of a second's worth: whoever takes from it
 * starts at most `perSecond` things a second, in bursts of at most a tenth of that. Real time
 * (monotonic), not the service's Clock: it paces work on this machine's cores.
 */
export function makeTokenBucket(perSecond: number, now: () => number = () => performance.now()) {
  const capacity = Math.max(1, perSecond / 10);
  let tokens = capacity;
  let at = now();
  function refill(): void {
    const t = now();
    tokens = Math.min(capacity, tokens + ((t - at) * perSecond) / 1000);
    at = t;
  }
  return {
    /** Whole tokens there now. */
    available(): number {
      refill();
      return Math.floor(tokens);
    },
    take(n: number): void {
      refill();
      tokens -= n;
    },
    /** How long until one whole token is there. */
    msUntilNext(): number {
      refill();
      return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / perSecond);
    },
  };
}

export type TokenBucket = ReturnType<typeof makeTokenBucket>;
