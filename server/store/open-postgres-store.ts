import pg from "pg";
import type { Clock } from "../clock.js";
import { makeSealer } from "../secrets/sealer.js";
import { storeOn, type Store } from "./index.js";
import { migratePostgres } from "./postgres/migrate.js";
import { openPostgresSealer } from "./sealing.js";
import { postgresSql } from "./sql/postgres-sql.js";

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
