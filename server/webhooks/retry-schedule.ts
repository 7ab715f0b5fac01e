/** After the first attempt (at once): the waits before each next one, 10 attempts in all over about 3 days. */
export const RETRY_WAITS_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
] as const;

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;

/**
 * When to try a delivery again after `attempts` failed ones; null when that was the last. `scale`
 * shortens the schedule (tests: 0.001 turns 5 s into 5 ms); jitter of ±10% keeps retries of many
 * deliveries from arriving at once.
 */
export function nextAttemptAt(
  attempts: number,
  now: Date,
  scale = 1,
  random: () => number = Math.random,
): string | null {
  const wait = RETRY_WAITS_MS[attempts - 1];
  if (wait === undefined) return null;
  const jittered = wait * scale * (0.9 + 0.2 * random());
  return new Date(now.getTime() + Math.round(jittered)).toISOString();
}

/**
 * How long an endpoint whose attempts keep failing is left alone after its 1st, 2nd… failure in a
 * row (1 s, doubling, 5 min at most): its other deliveries wait, their own schedules aside, so a dead
 * receiver takes an attempt now and then, not slots from the others. A success ends it.
 */
export const endpointPauses = (scale = 1): number[] =>
  Array.from({ length: 10 }, (_, i) => Math.round(Math.min(300_000, 1000 * 2 ** i) * scale));
