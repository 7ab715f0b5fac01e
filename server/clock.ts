/** The only source of "now" in the service, so that windows, leases and backoff can be tested. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with millisecond precision; sorts lexicographically in time order. */
export function toTimestamp(date: Date): string {
  return date.toISOString();
}
