import { LRUCache } from "lru-cache";

/** The only source of "now" in the service, so that windows, leases and backoff can be tested. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with millisecond precision; sorts lexicographically in time order. */
export function toTimestamp(date: Date): string {
  return date.toISOString();
}

/**
 * A time-limited LRU cache (`lru-cache`) whose entries expire on this clock: tests move time
 * with the clock, and staleness is checked on every read (no resolution window).
 */
export function clockedCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  clock: Clock,
  max: number,
  ttlMs: number,
): LRUCache<K, V> {
  return new LRUCache<K, V>({ max, ttl: ttlMs, ttlResolution: 0, perf: { now: () => clock.now().getTime() } });
}
