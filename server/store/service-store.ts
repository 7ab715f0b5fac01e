import { openStore, type OpenStoreOptions, type Store, type StoreReads } from "./index.js";
import { startWriter, type Writer, type WriterOptions } from "./writer/start-writer.js";
import type { WriteCommand } from "./writer/commands.js";
import { withPendingAudit } from "./audit-scope.js";
import { makeSameThreadWriter } from "./writer/same-thread-writer.js";

/**
 * The store as the service uses it: reads on this thread's connection, which never writes, and
 * writes through the writer thread, which owns the only writing connection. SQLite (fsync
 * included) thus stays off the event loop, and writes made at the same moment share a commit.
 */
export type ServiceStore = StoreReads & Pick<Store, "sql" | "cursorSecret"> & Writer;

export interface OpenServiceStoreOptions extends OpenStoreOptions, Pick<WriterOptions, "lazyCommitMs" | "onFailure"> {
  /**
   * Where writes are committed: on the writer thread (the service: SQLite and fsync stay off the
   * event loop), or on this thread's connection (a command-line run, which serves no one meanwhile).
   */
  writer?: "thread" | "this-thread";
}

/** Opens (creating and migrating if needed) the database, then starts its writer thread. */
export async function openServiceStore(
  path: string,
  { lazyCommitMs, onFailure, writer: where = "thread", ...options }: OpenServiceStoreOptions,
): Promise<ServiceStore> {
  if (path === ":memory:" || path === "") {
    throw new Error(
      "The service needs a database file: its reading and writing threads cannot share an in-memory database.",
    );
  }
  let writer: Writer;
  if (where === "this-thread") {
    const store = await openStore(path, options);
    writer = makeSameThreadWriter(store, { lazyCommitMs });
    return serviceStoreOf(store, writer, async () => {
      await writer.close();
      await store.close();
    });
  }
  // A write on this connection would compete with the writer thread for SQLite's lock and make
  // the event loop wait in the busy handler: refuse it outright.
  const store = await openStore(path, { ...options, readOnly: true });
  try {
    if (options.openDb) {
      throw new Error(
        "The writer thread opens the database file with better-sqlite3: another driver writes on this thread",
      );
    }
    const { clock: _clock, openDb: _openDb, ...db } = options;
    writer = await startWriter({ path, db, lazyCommitMs, onFailure });
  } catch (error) {
    await store.close();
    throw error;
  }
  return serviceStoreOf(store, writer, async () => {
    await writer.close();
    await store.close();
  });
}

/** The service store of `store`, its writes through `writer`. */
export function serviceStoreOf(store: Store, writer: Writer, close: () => Promise<void>): ServiceStore {
  return {
    ...store.reads,
    sql: store.sql,
    cursorSecret: store.cursorSecret,
    // A request's audit event rides with its first write (server/store/audit-scope.ts).
    write: ((...commands: readonly WriteCommand[]) => writer.write(...withPendingAudit(commands))) as Writer["write"],
    writeLazily: writer.writeLazily,
    stats: writer.stats,
    close,
  };
}
