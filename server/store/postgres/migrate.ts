import pg from "pg";
import type { Clock } from "../../clock.js";
import { MIGRATIONS, type Migration, type MigrationContext } from "../migrations/index.js";
import { SEALED_AT, SEAL_CHECK } from "../sealing.js";
import { POSTGRES_BASELINE, POSTGRES_BASELINE_VERSION } from "./baseline.js";

/**
 * The transaction-scoped advisory lock (`pg_advisory_xact_lock`) a node holds while it migrates: the
 * ASCII bytes of "assure" as a number. Advisory locks belong to one database, so databases on one
 * server do not wait for each other.
 */
export const MIGRATION_LOCK_KEY = 0x617373757265;

/**
 * Brings a PostgreSQL database to this build's schema and returns the versions it applied. An empty
 * database gets the baseline (SQLite's schema at migration 33), the seal check migration 10 leaves in
 * a new SQLite file, and versions 1 to 33 recorded; every later migration runs its `postgres` SQL.
 * All of it is one transaction under the advisory lock: nodes starting together migrate once (the
 * others wait, then find nothing to do), and a failure leaves the database as it was.
 */
export async function migratePostgres(
  db: pg.Pool | pg.ClientBase,
  clock: Clock,
  context: MigrationContext,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const client = db instanceof pg.Pool ? await db.connect() : db;
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    try {
      const applied = await migratePostgresInTransaction(client, clock, context, migrations);
      await client.query("COMMIT");
      return applied;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    }
  } finally {
    // A connection whose rollback failed is not given back to the pool.
    if (client !== db) (client as pg.PoolClient).release(broken);
  }
}

/**
 * migratePostgres's work inside the caller's open transaction (which commits or rolls it back): for
 * `assure db copy`, whose schema and rows are one transaction.
 */
export async function migratePostgresInTransaction(
  client: pg.ClientBase,
  clock: Clock,
  { sealer }: MigrationContext,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
  // Looked up first: a role that may not create tables still starts on a database already migrated.
  const exists = await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS found");
  if (exists.rows[0]?.found !== true) {
    await client.query(`CREATE TABLE schema_migrations (
      version bigint PRIMARY KEY, name text COLLATE "C" NOT NULL, applied_at text COLLATE "C" NOT NULL)`);
  }
  const recorded = await client.query<{ version: string }>("SELECT version FROM schema_migrations");
  const applied = new Set(recorded.rows.map((row) => Number(row.version)));
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    // The message SQLite's migrate gives.
    throw new Error(
      `The database is at schema version ${newest}, newer than this build knows (${known}); upgrade assure.`,
    );
  }
  const record = (migration: Migration) =>
    client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
      migration.version,
      migration.name,
      clock.now().toISOString(),
    ]);
  const done: number[] = [];
  if (applied.size === 0) {
    await client.query(POSTGRES_BASELINE);
    // What recordSealCheck seals: later starts open it to tell a wrong key.
    await client.query("INSERT INTO settings (key, value) VALUES ($1, $2)", [
      SEAL_CHECK,
      sealer.seal("assure", SEALED_AT.setting(SEAL_CHECK)),
    ]);
    for (const migration of migrations.filter((m) => m.version <= POSTGRES_BASELINE_VERSION)) {
      await record(migration);
      done.push(migration.version);
    }
  }
  for (const migration of migrations) {
    if (migration.version <= POSTGRES_BASELINE_VERSION || applied.has(migration.version)) continue;
    if (migration.postgres === undefined) {
      throw new Error(
        `Migration ${migration.version} (${migration.name}) has no PostgreSQL SQL: it cannot be applied.`,
      );
    }
    await client.query(migration.postgres);
    await record(migration);
    done.push(migration.version);
  }
  return done;
}
