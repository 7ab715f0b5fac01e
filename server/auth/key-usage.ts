import type { Clock } from "../clock.js";
import type { ServiceStore } from "../store/service-store.js";

/** How often a key's last_used_at is written at most: it says "in use lately", not each request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Notes that a key was used: at most once a minute per key, as a lazy write that rides with the
 * next commit. The request never waits for it.
 */
export function makeKeyUsageRecorder({ store, clock }: { store: Pick<ServiceStore, "writeLazily">; clock: Clock }) {
  const writtenAt = new Map<string, number>();
  return function keyUsed(keyId: string): void {
    const now = clock.now().getTime();
    const last = writtenAt.get(keyId);
    if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
    writtenAt.set(keyId, now);
    if (writtenAt.size > 100_000) writtenAt.clear(); // bounded: forgetting only means one more write
    store.writeLazily(["touchApiKey", keyId, new Date(now).toISOString()]).catch(() => writtenAt.delete(keyId));
  };
}
