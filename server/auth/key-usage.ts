import { clockedCache, type Clock } from "../clock.js";
import type { ServiceStore } from "../store/service-store.js";

/** How often a key's last_used_at is written at most: it says "in use lately", not each request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Notes that a key was used: at most once a minute per key, as a lazy write that rides with the
 * next commit. The request never waits for it.
 */
export function makeKeyUsageRecorder({ store, clock }: { store: Pick<ServiceStore, "writeLazily">; clock: Clock }) {
  // Bounded: forgetting a key only means one more write.
  const written = clockedCache<string, true>(clock, 100_000, LAST_USED_RESOLUTION_MS);
  return function keyUsed(keyId: string): void {
    if (written.has(keyId)) return;
    written.set(keyId, true);
    store.writeLazily(["touchApiKey", keyId, clock.now().toISOString()]).catch(() => written.delete(keyId));
  };
}
