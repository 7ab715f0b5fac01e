import type { Dialect } from "./dialect.js";

/**
 * The store's door to a database, whichever it is: statements answer later (PostgreSQL is across
 * the network), and a transaction is a function whose statements — wherever in the call chain
 * they are made — run on the transaction's connection.
 *
 * Statements take better-sqlite3's parameters on both databases: `@name` bound from one object,
 * `?` bound in order (arrays are spread), so the store's SQL is written once.
 */
export interface SqlStatement {
  get<Row = unknown>(...params: unknown[]): Promise<Row | undefined>;
  all<Row = unknown>(...params: unknown[]): Promise<Row[]>;
  run(...params: unknown[]): Promise<{ changes: number }>;
  /** The same statement, its rows read as their first column's value. */
  pluck(): SqlStatement;
}

export interface TransactionOptions {
  /**
   * Take the write lock before reading (SQLite's BEGIN IMMEDIATE): reads made in the transaction
   * cannot go stale. PostgreSQL transactions lock rows as they touch them; this asks nothing more.
   */
  immediate?: boolean;
}

export interface Sql {
  readonly kind: "sqlite" | "postgres";
  /** The SQL fragments of this database's dialect, for what the dialects write differently. */
  readonly dialect: Dialect;
  prepare(sql: string): SqlStatement;
  /** Runs statements that take no parameters (DDL, a script). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `work` in a transaction and commits what it wrote, or rolls all of it back if it throws.
   * Inside another transaction it is a savepoint: its failure undoes its own writes only.
   */
  transaction<T>(work: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True while the caller's chain of calls is inside a transaction on this database. */
  readonly inTransaction: boolean;
  close(): Promise<void>;
}

/**
 * A savepoint could not be rolled back because the database had already undone the whole
 * transaction (SQLite on disk full or I/O errors; PostgreSQL when the connection is lost): nothing
 * more may run in it. `cause` is the failure that undid it.
 */
export class TransactionLostError extends Error {
  override name = "TransactionLostError";
  constructor(override readonly cause: unknown) {
    super("The transaction was rolled back by the database", { cause });
  }
}

/**
 * PostgreSQL gave up the transaction to let another go on: a serialization failure (40001) or a
 * deadlock (40P01). Run again from its start, it may well succeed. SQLite never answers these.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code === "40001" || code === "40P01";
}

/** The SQLSTATE of an error PostgreSQL answered with (node-postgres' DatabaseError carries its severity and code). */
export function sqlStateOf(error: unknown): string | undefined {
  const { severity, code } = (error ?? {}) as { severity?: unknown; code?: unknown };
  return typeof severity === "string" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
