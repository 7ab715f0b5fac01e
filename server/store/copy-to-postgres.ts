import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import type { Clock } from "../clock.js";
import type { Sealer } from "../secrets/sealer.js";
import { keyFileOf } from "../secrets/encryption-key.js";
import type { Db } from "./db.js";
import { LATEST_MIGRATION } from "./migrations/index.js";
import { MIGRATION_LOCK_KEY, migratePostgresInTransaction } from "./postgres/migrate.js";
import { SEALED_AT, SEAL_CHECK, openSealer } from "./sealing.js";
import { sqliteDialect } from "./sql/dialect.js";
import { RowChecksum } from "./copy/row-checksum.js";
import { insertOrderSelect, orderBy, quoted, tablesInForeignKeyOrder, type CopiedTable } from "./copy/sqlite-tables.js";

/** The copy was not started: the source or the target is not one it may copy (nothing was changed). */
export class CopyRefusedError extends Error {
  override name = "CopyRefusedError";
}

/** A table whose rows on PostgreSQL are not the rows read from SQLite: the copy was rolled back. */
export class CopyVerificationError extends Error {
  override name = "CopyVerificationError";
}

export interface CopyToPostgresOptions {
  /** The SQLite database to copy. */
  sqlitePath: string;
  /** An empty PostgreSQL database. */
  postgresUrl: string;
  /** ASSURE_ENCRYPTION_KEY, parsed; without it, the key file beside the SQLite database. */
  encryptionKey: Buffer | undefined;
  clock: Clock;
}

export interface CopiedTableReport {
  table: string;
  rows: number;
  /** sha256 over the rows in primary-key order, the same on both databases. */
  checksum: string;
}

export interface CopyReport {
  tables: CopiedTableReport[];
  rows: number;
  /** The id of the key the secrets are sealed with, on both databases. */
  keyId: string;
  /** Where that key was read from: ASSURE_ENCRYPTION_KEY, or the key file's path. */
  keySource: "ASSURE_ENCRYPTION_KEY" | { keyFile: string };
}

/** PostgreSQL's limit of bound parameters in one statement. */
const MAX_PARAMETERS = 65_535;
const MAX_ROWS_PER_INSERT = 1_000;
/** A batch is sent once its values reach this many bytes, whatever its row count: conversations can be large. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
/** Rows fetched at a time when the copied rows are read back from PostgreSQL. */
const FETCH_ROWS = 1_000;

/**
 * Copies the SQLite database at `sqlitePath` into the empty PostgreSQL database at `postgresUrl`:
 * the schema (migratePostgres), then every table's rows in foreign-key order, in ONE PostgreSQL
 * transaction, from one read transaction on SQLite (a consistent snapshot). Sealed values are
 * copied as they are: the key that opens the source's seal check opens the target's. Each table's
 * row count and checksum are compared on both sides before the commit; any failure rolls back,
 * leaving the target empty.
 */
export async function copySqliteToPostgres({
  sqlitePath,
  postgresUrl,
  encryptionKey,
  clock,
}: CopyToPostgresOptions): Promise<CopyReport> {
  if (!existsSync(sqlitePath)) throw new CopyRefusedError(`There is no SQLite database at ${sqlitePath}.`);
  const source: Db = Object.assign(new Database(sqlitePath, { readonly: true, fileMustExist: true }), {
    dialect: sqliteDialect,
  });
  try {
    source.exec("BEGIN"); // every read below sees one snapshot of the file
    assertLatestSchema(source, sqlitePath);
    const sealer = openSealer(source, sqlitePath, encryptionKey);
    const tables = tablesInForeignKeyOrder(source);
    const target = new pg.Client({
      connectionString: postgresUrl,
      application_name: "assure db copy",
      // bigint read as BigInt, as SQLite's integers are read here: compared exactly, whatever their size.
      types: { getTypeParser: (oid, format) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format)) },
    });
    await target.connect();
    try {
      await target.query("BEGIN");
      try {
        const copied = await copyInto(target, source, tables, sealer, clock);
        await target.query("COMMIT");
        return {
          tables: copied,
          rows: copied.reduce((sum, table) => sum + table.rows, 0),
          keyId: sealer.keyId,
          keySource: encryptionKey ? "ASSURE_ENCRYPTION_KEY" : { keyFile: keyFileOf(sqlitePath) },
        };
      } catch (error) {
        await target.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    } finally {
      await target.end();
    }
  } finally {
    if (source.inTransaction) source.exec("ROLLBACK");
    source.close();
  }
}

function assertLatestSchema(source: Db, sqlitePath: string): void {
  const hasMigrations = source.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'schema_migrations'").get();
  const version = hasMigrations
    ? ((source.prepare("SELECT max(version) FROM schema_migrations").pluck().get() as number | null) ?? 0)
    : 0;
  if (version < LATEST_MIGRATION) {
    throw new CopyRefusedError(
      `The database at ${sqlitePath} is at schema version ${version}; this build copies version ${LATEST_MIGRATION}. ` +
        "Start this version of assure on it once (with ASSURE_DB pointing at it: it migrates the file), stop it, then copy.",
    );
  }
  if (version > LATEST_MIGRATION) {
    throw new CopyRefusedError(
      `The database at ${sqlitePath} is at schema version ${version}, newer than this build knows (${LATEST_MIGRATION}); upgrade assure.`,
    );
  }
}

async function copyInto(
  target: pg.ClientBase,
  source: Db,
  tables: readonly CopiedTable[],
  sealer: Sealer,
  clock: Clock,
): Promise<CopiedTableReport[]> {
  // Held to the commit: a service starting on this database meanwhile waits, then finds it migrated and full.
  await target.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
  // pg_class, not information_schema: it lists tables this role has no privilege on too.
  const existing = await target.query<{ table_name: string }>(
    `SELECT c.relname AS table_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
  );
  if (existing.rows.length > 0) {
    const names = existing.rows.map((row) => row.table_name);
    throw new CopyRefusedError(
      `The target database is not empty: its schema already has ${names.length} table(s) (${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}). ` +
        "Copy into a new, empty database.",
    );
  }
  await migratePostgresInTransaction(target, clock, { sealer });
  await assertSameTables(target, tables);
  // The migration recorded its versions and a seal check of its own: the source's replace them.
  await target.query("DELETE FROM schema_migrations");
  await target.query("DELETE FROM settings");
  for (const table of tables) await insertRows(target, source, table);
  const report: CopiedTableReport[] = [];
  for (const table of tables) report.push(await verify(target, source, table));
  await advanceIdentities(target, source);
  await assertSealCheckOpens(target, sealer);
  return report;
}

async function assertSameTables(target: pg.ClientBase, tables: readonly CopiedTable[]): Promise<void> {
  const created = await target.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  );
  const onTarget = new Set(created.rows.map((row) => row.table_name));
  const onSource = new Set(tables.map((table) => table.name));
  const onlySource = [...onSource].filter((name) => !onTarget.has(name));
  const onlyTarget = [...onTarget].filter((name) => !onSource.has(name));
  if (onlySource.length > 0 || onlyTarget.length > 0) {
    throw new Error(
      `The schemas differ: tables only in SQLite: ${onlySource.join(", ") || "none"}; only in PostgreSQL: ${onlyTarget.join(", ") || "none"}.`,
    );
  }
}

/** Streams the table's rows from SQLite into multi-row INSERTs, within PostgreSQL's parameter limit. */
async function insertRows(target: pg.ClientBase, source: Db, table: CopiedTable): Promise<void> {
  const width = table.columns.length;
  const rowsPerInsert = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / width)));
  const head = `INSERT INTO ${quoted(table.name)} (${table.columns.map(quoted).join(", ")}) VALUES `;
  const statements = new Map<number, string>();
  const statementFor = (rows: number) => {
    let text = statements.get(rows);
    if (text === undefined) {
      const tuples = Array.from(
        { length: rows },
        (_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`,
      );
      text = head + tuples.join(", ");
      statements.set(rows, text);
    }
    return text;
  };
  let values: unknown[] = [];
  let bytes = 0;
  const flush = async () => {
    if (values.length === 0) return;
    const batch = values;
    values = [];
    bytes = 0;
    try {
      await target.query(statementFor(batch.length / width), batch);
    } catch (error) {
      throw new Error(`Copying table ${table.name} failed: ${(error as Error).message}`, { cause: error });
    }
  };
  for (const row of sqliteRows(source, insertOrderSelect(table))) {
    for (const value of row) {
      values.push(value);
      bytes += typeof value === "string" ? value.length : value instanceof Uint8Array ? value.byteLength : 8;
    }
    if (values.length / width >= rowsPerInsert || bytes >= MAX_BATCH_BYTES) await flush();
  }
  await flush();
}

/** Counts and checksums the table on both databases, in primary-key order; they must agree. */
async function verify(target: pg.ClientBase, source: Db, table: CopiedTable): Promise<CopiedTableReport> {
  const columns = table.columns.map(quoted).join(", ");
  const onSource = new RowChecksum();
  for (const row of sqliteRows(source, `SELECT ${columns} FROM ${quoted(table.name)} ${orderBy(table)}`)) {
    onSource.add(row);
  }

  const onTarget = new RowChecksum();
  await target.query(
    `DECLARE copied_rows NO SCROLL CURSOR FOR SELECT ${columns} FROM ${quoted(table.name)} ${orderBy(table)}`,
  );
  for (;;) {
    const page = await target.query<unknown[]>({ text: `FETCH ${FETCH_ROWS} FROM copied_rows`, rowMode: "array" });
    for (const row of page.rows) onTarget.add(row);
    if (page.rows.length < FETCH_ROWS) break;
  }
  await target.query("CLOSE copied_rows");

  const checksum = onSource.digest();
  if (onSource.rows !== onTarget.rows || checksum !== onTarget.digest()) {
    throw new CopyVerificationError(
      `Table ${table.name} differs after the copy: ${onSource.rows} row(s) in SQLite, ${onTarget.rows} in PostgreSQL` +
        `${onSource.rows === onTarget.rows ? ", with different values" : ""}. Nothing was committed.`,
    );
  }
  return { table: table.name, rows: onSource.rows, checksum };
}

/**
 * Sets every identity column's sequence (jobs.job_id) past the largest id SQLite ever handed out:
 * the largest copied, or AUTOINCREMENT's high-water mark if higher (ids of deleted rows are not reused).
 */
async function advanceIdentities(target: pg.ClientBase, source: Db): Promise<void> {
  const identities = await target.query<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'",
  );
  const hasSequences = source.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'").get();
  for (const { table_name: table, column_name: column } of identities.rows) {
    const copied = await target.query<{ largest: bigint | null }>(
      `SELECT max(${quoted(column)}) AS largest FROM ${quoted(table)}`,
    );
    const handedOut = hasSequences
      ? ([...sqliteRows(source, "SELECT seq FROM sqlite_sequence WHERE name = ?", table)][0]?.[0] as bigint | undefined)
      : undefined;
    const largest = [copied.rows[0]?.largest ?? 0n, handedOut ?? 0n].reduce((a, b) => (a > b ? a : b));
    // setval(…, n, true): the next id is n + 1; an empty table's sequence starts at 1.
    await target.query("SELECT setval(pg_get_serial_sequence($1, $2), $3, $4)", [
      quoted(table),
      column,
      largest > 0n ? largest : 1n,
      largest > 0n,
    ]);
  }
}

/** The rows of a query streamed as arrays, integers as bigint (exact beyond 2^53). */
function sqliteRows(source: Db, sql: string, ...params: unknown[]): IterableIterator<unknown[]> {
  const statement = source.prepare(sql) as unknown as Database.Statement<unknown[], unknown[]>;
  return statement
    .raw(true)
    .safeIntegers(true)
    .iterate(...params);
}

async function assertSealCheckOpens(target: pg.ClientBase, sealer: Sealer): Promise<void> {
  const check = await target.query<{ value: string }>("SELECT value FROM settings WHERE key = $1", [SEAL_CHECK]);
  const sealed = check.rows[0]?.value;
  if (sealed === undefined) throw new Error("The copied database has no seal check: nothing was committed.");
  try {
    sealer.open(sealed, SEALED_AT.setting(SEAL_CHECK));
  } catch {
    throw new CopyVerificationError(
      `The copied seal check does not open with the key (id ${sealer.keyId}): nothing was committed.`,
    );
  }
}
