/**
 * Commits what has queued, then what queued meanwhile, one commit at a time: `drain()` starts the
 * loop, or joins the one that runs. While `running`, the loop will look at the queue again, so a
 * write queued meanwhile needs no turn of its own.
 *
 * The loop starts only when something is queued: it then awaits at least once, so its end (which
 * clears `running` in the same step as its last look at the queue) always comes after `drain()` has
 * returned. A loop that found nothing could otherwise leave `running` set for good, and no later
 * write would be committed.
 */
export function makeSerialDrain(hasQueued: () => boolean, commitQueued: () => Promise<void>) {
  let loop: Promise<void> | undefined;
  return {
    get running() {
      return loop !== undefined;
    },
    drain(): Promise<void> {
      if (loop) return loop;
      if (!hasQueued()) return Promise.resolve();
      loop = (async () => {
        try {
          while (hasQueued()) await commitQueued();
        } finally {
          loop = undefined;
        }
      })();
      return loop;
    },
  };
}
