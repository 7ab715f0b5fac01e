import type { Db } from "./db.js";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface WriteBatcherOptions {
  /** How long a lazy write may wait for a write that someone awaits before it commits on its own. */
  lazyCommitMs?: number;
}

/**
 * Group commit: writes queued in the same turn of the event loop are committed together, in one
 * transaction and so one fsync, and each caller's promise settles once that commit is durable.
 * Each write runs in its own savepoint, so one that throws is undone alone and rejects alone.
 *
 * A lazy write (one nobody waits for at once) does not start a commit of its own: it rides with
 * the next ordinary write, or commits after `lazyCommitMs`. Every commit takes the whole queue,
 * so writes always commit in the order they were queued.
 */
export function makeWriteBatcher(db: Db, { lazyCommitMs = 20 }: WriteBatcherOptions = {}) {
  let queue: Pending[] = [];
  let scheduled = false;
  let lazyTimer: NodeJS.Timeout | undefined;
  // One wrapper for every item (better-sqlite3 builds four functions per `db.transaction` call).
  const inSavepoint = db.transaction((work: () => unknown) => work());

  const commitBatch = db.transaction((batch: Pending[]) =>
    batch.map((item) => {
      // Some errors (disk full, I/O) make SQLite roll back the whole transaction: then nothing
      // more may run in it, and the batch as a whole fails.
      if (!db.inTransaction) throw new Error("The batch's transaction was rolled back by SQLite");
      try {
        return { ok: true as const, value: inSavepoint(item.work) };
      } catch (error) {
        if (!db.inTransaction) throw error;
        return { ok: false as const, error };
      }
    }),
  );

  function drain(): void {
    scheduled = false;
    clearTimeout(lazyTimer);
    lazyTimer = undefined;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    let outcomes;
    try {
      outcomes = commitBatch(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error)));
  }

  function enqueue<T>(work: () => T, lazy: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (scheduled) return;
      if (!lazy) {
        scheduled = true;
        setImmediate(drain);
      } else {
        lazyTimer ??= setTimeout(drain, lazyCommitMs);
      }
    });
  }

  return {
    /** Queues `work` for the next group commit; resolves once it is durable. */
    write: <T>(work: () => T): Promise<T> => enqueue(work, false),
    /** Queues `work` to commit with the next ordinary write, or within `lazyCommitMs`. */
    writeLazily: <T>(work: () => T): Promise<T> => enqueue(work, true),
    /** Commits what is queued now (before the database closes). */
    drainNow: drain,
  };
}
