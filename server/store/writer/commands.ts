import type { Store, StoreWrites } from "../index.js";

/**
 * A write the service sends to its writer thread: `[name, ...arguments]` of one of the store's
 * `writes`. A write is a list of commands applied together (all or none); arguments and results
 * cross the thread boundary by structured clone, so they are plain data.
 */
export type WriteName = keyof StoreWrites;

/** `[name, ...arguments]` of one store write. */
export type WriteCommand = { [K in WriteName]: readonly [K, ...Parameters<StoreWrites[K]>] }[WriteName];

/** What each command of a write returned, in order. */
export type WriteResults<C extends readonly WriteCommand[]> = {
  -readonly [I in keyof C]: C[I] extends readonly [infer K extends WriteName, ...unknown[]]
    ? ReturnType<StoreWrites[K]>
    : never;
};

export type WriteOutcome = { ok: true; values: unknown[] } | { ok: false; error: unknown };

/**
 * Group commit: applies writes in one transaction, so one fsync makes them all durable. Each
 * write runs in its own savepoint: one that throws is undone alone and fails alone.
 */
export function makeGroupCommit(store: Store) {
  const { db, writes } = store;
  const apply = (commands: readonly WriteCommand[]) => {
    const results: unknown[] = [];
    for (const [name, ...args] of commands) {
      if (!Object.hasOwn(writes, name)) throw new Error(`Unknown write command '${String(name)}'`);
      // An audit event records what the commands before it did: it is given their results.
      const call = name === "appendAuditEvent" ? [args[0], args[1], [...results]] : args;
      results.push((writes[name] as (...params: unknown[]) => unknown)(...call));
    }
    return results;
  };
  // One wrapper for every write (better-sqlite3 builds four functions per `db.transaction` call).
  const inSavepoint = db.transaction(apply);

  const commitAll = db.transaction((writes: readonly (readonly WriteCommand[])[]): WriteOutcome[] =>
    writes.map((commands) => {
      // Some errors (disk full, I/O) make SQLite roll back the whole transaction: then nothing
      // more may run in it, and the batch as a whole fails.
      if (!db.inTransaction) throw new Error("The batch's transaction was rolled back by SQLite");
      try {
        return { ok: true, values: inSavepoint(commands) };
      } catch (error) {
        if (!db.inTransaction) throw error;
        return { ok: false, error };
      }
    }),
  );

  /** Commits `writes` and returns each one's outcome; if the commit itself fails, every write fails with it. */
  return function commit(writes: readonly (readonly WriteCommand[])[]): WriteOutcome[] {
    try {
      // IMMEDIATE: the write lock is taken (waiting for another process's writer, such as the CLI)
      // before anything is read, so no read can go stale and fail the batch with SQLITE_BUSY_SNAPSHOT.
      return commitAll.immediate(writes);
    } catch (error) {
      return writes.map(() => ({ ok: false, error }));
    }
  };
}
