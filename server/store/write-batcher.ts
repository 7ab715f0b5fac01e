import type { Db } from "./db.js";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes queued in the same turn of the event loop are committed together, in one
 * transaction and so one fsync, and each caller's promise settles once that commit is durable.
 * Each write runs in its own savepoint, so one that throws is undone alone and rejects alone.
 */
export function makeWriteBatcher(db: Db) {
  let queue: Pending[] = [];
  let scheduled = false;
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

  return {
    write<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(drain);
        }
      });
    },
  };
}
