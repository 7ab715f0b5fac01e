import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { sqliteDialect, type Dialect } from "./sql/dialect.js";

/** A prepared statement: what the store asks of one (better-sqlite3's, or the WebAssembly driver's). */
export interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  /** Rows read as their first column's value. */
  pluck(toggle?: boolean): this;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any arguments, as better-sqlite3 types them
type TransactionFunction = (...args: any[]) => unknown;
type ArgumentsOf<F> = F extends (...args: infer A) => unknown ? A : never;

/** `fn` in a transaction (BEGIN … COMMIT), or in a savepoint when one is already open. */
export type Transaction<F extends TransactionFunction> = {
  (...args: ArgumentsOf<F>): ReturnType<F>;
  /** BEGIN IMMEDIATE: the write lock is taken before anything is read. */
  immediate(...args: ArgumentsOf<F>): ReturnType<F>;
};

/** A connection to the database, as the store uses it: better-sqlite3's API, the part the store needs. */
export interface Db {
  prepare(sql: string): Statement;
  exec(sql: string): this;
  pragma(source: string): unknown;
  transaction<F extends TransactionFunction>(fn: F): Transaction<F>;
  readonly inTransaction: boolean;
  /** False once closed. */
  readonly open: boolean;
  close(): this;
  /** The SQL fragments of this database's dialect, for what the dialects write differently. */
  readonly dialect: Dialect;
}

/** Opens the database at `path` (creating it if needed). */
export type OpenDb = (path: string, options?: OpenDbOptions) => Db;

export interface OpenDbOptions {
  /** FULL (default): an acknowledged write survives power loss. NORMAL trades that for speed. */
  synchronous?: "FULL" | "NORMAL" | "EXTRA";
  busyTimeoutMs?: number;
}

/** Opens (creating if needed) the SQLite file in WAL mode with foreign keys enforced. */
export const openDb: OpenDb = (path, { synchronous = "FULL", busyTimeoutMs = 5000 } = {}) => {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return Object.assign(db, { dialect: sqliteDialect });
};
