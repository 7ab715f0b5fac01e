/**
 * How busy the API is: the requests it started in the last second. Background work that competes
 * for the same cores (the webhook deliverer) asks it and holds back while the API is serving.
 *
 * It reads a monotonic clock, not the service's Clock: it measures rates in real time, which a
 * test's fixed or fast-forwarded clock must not distort.
 */
export interface ApiActivity {
  requestStarted(): void;
  /** Whether at least `threshold` requests started in the last second. */
  busy(): boolean;
}

const BUCKET_MS = 250;
const BUCKETS = 4;

export function makeApiActivity({
  threshold = 20,
  now = () => performance.now(),
}: { threshold?: number; now?: () => number } = {}): ApiActivity {
  // A ring of four 250 ms buckets: a sliding second that costs one increment per request.
  const counts = new Array<number>(BUCKETS).fill(0);
  let current = Math.floor(now() / BUCKET_MS);

  function advance(): void {
    const bucket = Math.floor(now() / BUCKET_MS);
    for (let b = current + 1; b <= Math.min(bucket, current + BUCKETS); b++) counts[b % BUCKETS] = 0;
    current = Math.max(current, bucket);
  }

  return {
    requestStarted() {
      advance();
      counts[current % BUCKETS]!++;
    },
    busy() {
      advance();
      return counts.reduce((sum, n) => sum + n, 0) >= threshold;
    },
  };
}
