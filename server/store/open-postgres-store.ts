import pg from "pg";
import type { Clock } from "../clock.js";
import { makeSealer } from "../secrets/sealer.js";
import { storeOn, type Store } from "./index.js";
import { migratePostgres } from "./postgres/migrate.js";
import { openPostgresSealer } from "./sealing.js";
import { postgresSql } from "./sql/postgres-sql.js";
import { serviceStoreOf, type ServiceStore } from "./service-store.js";
import type { WriterOptions } from "./writer/start-writer.js";
import { makeSameThreadWriter } from "./writer/same-thread-writer.js";

export interface OpenPostgresStoreOptions {
  clock: Clock;
  /** ASSURE_ENCRYPTION_KEY: on PostgreSQL the only source of the key, the same on every node. */
  encryptionKey: Buffer;
  /** Connections this process keeps open at most. */
  maxConnections?: number | undefined;
}

/**
 * Opens the PostgreSQL database at `url`, migrating it first (once, under a lock, however many
 * nodes start together), with its secrets sealed under `encryptionKey`.
 */
export async function openPostgresStore(
  url: string,
  { clock, encryptionKey, maxConnections }: OpenPostgresStoreOptions,
): Promise<Store> {
  const migrator = new pg.Client({ connectionString: url, application_name: "assure (migrating)" });
  await migrator.connect();
  try {
    await migratePostgres(migrator, clock, { sealer: makeSealer(encryptionKey) });
  } finally {
    await migrator.end();
  }
  const sql = postgresSql({ connectionString: url, maxConnections });
  try {
    const sealer = await openPostgresSealer(sql, encryptionKey);
    return await storeOn(sql, sealer, {
      scrubFreePages() {
        // PostgreSQL reuses a dead row's space after VACUUM; its old bytes are not reachable through SQL.
      },
    });
  } catch (error) {
    await sql.close();
    throw error;
  }
}

export interface OpenPostgresServiceStoreOptions
  extends OpenPostgresStoreOptions, Pick<WriterOptions, "lazyCommitMs"> {}

/**
 * The service's store on PostgreSQL: reads on the pool's connections, writes in group commits on
 * this thread (the network I/O of a query does not hold the event loop, so no thread is needed).
 */
export async function openPostgresServiceStore(
  url: string,
  { lazyCommitMs, ...options }: OpenPostgresServiceStoreOptions,
): Promise<ServiceStore> {
  const store = await openPostgresStore(url, options);
  const writer = makeSameThreadWriter(store, { lazyCommitMs });
  return serviceStoreOf(store, writer, async () => {
    await writer.close();
    await store.close();
  });
}
