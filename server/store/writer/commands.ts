import type { Store, StoreWrites } from "../index.js";
import { TransactionLostError } from "../sql/sql.js";

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

/**
 * Group commit: applies writes in one transaction, so one commit (one fsync on SQLite) makes them
 * all durable. Each write runs in its own savepoint: one that throws is undone alone and fails alone.
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
              outcomes.push({ ok: false, error });
            }
          }
          return outcomes;
        },
        { immediate: true },
      );
    } catch (error) {
      return batch.map(() => ({ ok: false, error }));
    }
  };
}
