import type { Store, StoreWrites } from "../index.js";
import { TransactionLostError, isTransientConflict } from "../sql/sql.js";

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
    ? Awaited<ReturnType<StoreWrites[K]>>
    : never;
};

export type WriteOutcome = { ok: true; values: unknown[] } | { ok: false; error: unknown };

/** How many times a batch is run before a serialization failure or a deadlock fails its write. */
const BATCH_ATTEMPTS = 3;

/** A write of the batch met a transient conflict: the batch is undone, to run again from its start. */
class BatchConflict extends Error {
  constructor(override readonly cause: unknown) {
    super("A write of the batch met a serialization failure or a deadlock", { cause });
  }
}

/**
 * Group commit: applies writes in one transaction, so one commit (one fsync on SQLite) makes them
 * all durable. Each write runs in its own savepoint: one that throws is undone alone and fails alone.
 *
 * On PostgreSQL, nodes writing at once may deadlock (two batches taking the same locks in opposite
 * orders) or meet a serialization failure (40P01, 40001). Undoing only that write's savepoint would
 * not help: the batch's transaction still holds the locks the other one waits for. So the whole
 * batch is rolled back and run again, up to BATCH_ATTEMPTS times in all: this is safe, because a
 * write is only statements in this transaction, and none of them committed. On the last run such a
 * conflict fails its write alone, like any other error.
 */
export function makeGroupCommit(store: Store) {
  const { sql, writes } = store;
  const apply = async (commands: readonly WriteCommand[]) => {
    const results: unknown[] = [];
    for (const [name, ...args] of commands) {
      if (!Object.hasOwn(writes, name)) throw new Error(`Unknown write command '${String(name)}'`);
      // An audit event records what the commands before it did: it is given their results.
      const call = name === "appendAuditEvent" ? [args[0], args[1], [...results]] : args;
      results.push(await (writes[name] as (...params: unknown[]) => Promise<unknown>)(...call));
    }
    return results;
  };

  /** Commits `writes` and returns each one's outcome; if the commit itself fails, every write fails with it. */
  return async function commit(batch: readonly (readonly WriteCommand[])[]): Promise<WriteOutcome[]> {
    for (let attempt = 1; ; attempt++) {
      const retryable = attempt < BATCH_ATTEMPTS;
      try {
        // IMMEDIATE: SQLite's write lock is taken (waiting for another process's writer, such as the
        // CLI) before anything is read, so no read can go stale and fail the batch with SQLITE_BUSY_SNAPSHOT.
        return await sql.transaction(
          async () => {
            const outcomes: WriteOutcome[] = [];
            for (const commands of batch) {
              try {
                outcomes.push({ ok: true, values: await sql.transaction(() => apply(commands)) });
              } catch (error) {
                // The database undid the whole transaction (disk full, I/O, a lost connection):
                // nothing more may run in it, and the batch as a whole fails.
                if (error instanceof TransactionLostError) throw error.cause;
                if (retryable && isTransientConflict(error)) throw new BatchConflict(error);
                outcomes.push({ ok: false, error });
              }
            }
            return outcomes;
          },
          { immediate: true },
        );
      } catch (error) {
        if (retryable && (error instanceof BatchConflict || isTransientConflict(error))) continue;
        return batch.map(() => ({ ok: false, error }));
      }
    }
  };
}
