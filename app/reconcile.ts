import { coerceError } from "../server/errors.js";
import type { Logger } from "../server/log.js";
import type { ServiceStore } from "../server/store/service-store.js";
import type { Clock } from "../server/clock.js";
import { syncCheckRunJob } from "./checks/sync-check-run.js";

/**
 * Every `intervalMs`, queues the publishing of each gated commit whose check run is missing or
 * behind its decision — a run ended, a waiver changed it, a publish failed or the process died
 * mid-way — so that no decision stays unpublished. A commit's job is queued once at a time.
 */
export function startReconciling(
  { store, clock, log, nudge }: { store: ServiceStore; clock: Clock; log: Logger; nudge: () => void },
  intervalMs: number,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // Never rejects: what fails is logged, and the next tick tries again.
  const tick = async () => {
    try {
      const stale = await store.listStaleGitHubCommits(200);
      if (stale.length > 0) {
        const now = clock.now().toISOString();
        await store.write(...stale.map((commit) => ["enqueueJob", syncCheckRunJob(commit, now)] as const));
        nudge();
      }
    } catch (raw) {
      log.error({ err: coerceError(raw) }, "Could not look for check runs to publish; trying again");
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  timer = setTimeout(() => void tick(), intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
