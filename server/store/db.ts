import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type Db = Database.Database;

export interface OpenDbOptions {
  /** FULL (default): an acknowledged write survives power loss. NORMAL trades that for speed. */
  synchronous?: "FULL" | "NORMAL" | "EXTRA";
  busyTimeoutMs?: number;
}

/** Opens (creating if needed) the SQLite file in WAL mode with foreign keys enforced. */
export function openDb(path: string, { synchronous = "FULL", busyTimeoutMs = 5000 }: OpenDbOptions = {}): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return db;
}
