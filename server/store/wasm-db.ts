import initSqlJs, { type BindParams, type Database, type SqlValue, type Statement as SqlJsStatement } from "sql.js";
import type { Db, OpenDb, Statement, Transaction } from "./db.js";
import { sqliteDialect } from "./sql/dialect.js";

type TransactionFunction = Parameters<Db["transaction"]>[0];
type ArgumentsOf<F> = F extends (...args: infer A) => unknown ? A : never;

/**
 * SQLite compiled to WebAssembly (sql.js), for where no native module can be loaded: the GitHub
 * Action's bundle runs the engine in the runner with it. The database lives in memory (a run there
 * is uploaded, then dropped) and behaves as better-sqlite3 does for what the store asks of it:
 * named parameters given without their prefix, BLOBs read as Buffers, nested transactions as
 * savepoints, a transaction rolled back when its function throws.
 */
export async function loadWasmSqlite(): Promise<OpenDb> {
  // SQLite's own math functions (ceil, …), as better-sqlite3's SQLite has them, not sql.js's old extensions.
  const SQL = await initSqlJs({ useOldExtensionFunctions: false } as Parameters<typeof initSqlJs>[0]);
  return () => wrapDatabase(new SQL.Database());
}

function wrapDatabase(db: Database): Db {
  // One compiled statement per text, reset before each use: sql.js statements hold WebAssembly
  // memory until freed, and the store prepares some statements on every call.
  const compiled = new Map<string, SqlJsStatement>();
  let depth = 0;
  let open = true;
  let savepoints = 0;

  // Some errors (a full disk) make SQLite roll back the transaction itself: the error that did is
  // the one to report, not the failed ROLLBACK after it.
  const undo = (sql: string) => {
    try {
      db.exec(sql);
    } catch {
      // already rolled back
    }
  };

  const compile = (sql: string): SqlJsStatement => {
    let statement = compiled.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      compiled.set(sql, statement);
    }
    return statement;
  };

  function rowsOf(sql: string, params: unknown[], pluck: boolean, limit: number): unknown[] {
    const statement = compile(sql);
    try {
      statement.bind(toBindParams(params));
      const rows: unknown[] = [];
      while (rows.length < limit && statement.step()) {
        const values = statement.get().map(fromSqlValue);
        if (pluck) rows.push(values[0]);
        else {
          const columns = statement.getColumnNames();
          rows.push(Object.fromEntries(columns.map((column, i) => [column, values[i]])));
        }
      }
      return rows;
    } finally {
      statement.reset();
    }
  }

  const wrapper: Db = {
    dialect: sqliteDialect,
    prepare(sql: string): Statement {
      compile(sql); // a syntax error is thrown here, as better-sqlite3 throws it
      let pluck = false;
      const statement: Statement = {
        get: (...params) => rowsOf(sql, params, pluck, 1)[0],
        all: (...params) => rowsOf(sql, params, pluck, Infinity),
        run(...params) {
          rowsOf(sql, params, false, Infinity);
          const changes = db.getRowsModified();
          const lastInsertRowid = db.exec("SELECT last_insert_rowid()")[0]!.values[0]![0] as number;
          return { changes, lastInsertRowid };
        },
        pluck(toggle = true) {
          pluck = toggle;
          return statement;
        },
      };
      return statement;
    },
    exec(sql: string) {
      db.exec(sql);
      return wrapper;
    },
    pragma(source: string) {
      return db
        .exec(`PRAGMA ${source}`)
        .flatMap(({ columns, values }) =>
          values.map((row) => Object.fromEntries(columns.map((column, i) => [column, fromSqlValue(row[i]!)]))),
        );
    },
    transaction<F extends TransactionFunction>(fn: F): Transaction<F> {
      const run = (begin: string, args: ArgumentsOf<F>): ReturnType<F> => {
        if (depth > 0) {
          const name = `s${++savepoints}`;
          db.exec(`SAVEPOINT ${name}`);
          depth++;
          try {
            const result = fn(...args) as ReturnType<F>;
            db.exec(`RELEASE ${name}`);
            return result;
          } catch (error) {
            undo(`ROLLBACK TO ${name}; RELEASE ${name}`);
            throw error;
          } finally {
            depth--;
          }
        }
        db.exec(begin);
        depth = 1;
        try {
          const result = fn(...args) as ReturnType<F>;
          db.exec("COMMIT");
          return result;
        } catch (error) {
          undo("ROLLBACK");
          throw error;
        } finally {
          depth = 0;
        }
      };
      const transaction = ((...args: ArgumentsOf<F>) => run("BEGIN", args)) as Transaction<F>;
      transaction.immediate = (...args: ArgumentsOf<F>) => run("BEGIN IMMEDIATE", args);
      return transaction;
    },
    get inTransaction() {
      return depth > 0;
    },
    get open() {
      return open;
    },
    close() {
      for (const statement of compiled.values()) statement.free();
      compiled.clear();
      db.close();
      open = false;
      return wrapper;
    },
  };
  return wrapper;
}

/** better-sqlite3's arguments (values in order, or one object of named values) as sql.js binds them. */
function toBindParams(params: unknown[]): BindParams {
  const [first] = params;
  if (params.length === 1 && isNamedValues(first)) {
    const named: Record<string, SqlValue> = {};
    for (const [key, value] of Object.entries(first)) {
      const bound = toSqlValue(value);
      named[`@${key}`] = bound;
      named[`:${key}`] = bound;
      named[`$${key}`] = bound;
    }
    return named;
  }
  return params.map(toSqlValue);
}

function isNamedValues(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !(value instanceof Uint8Array) && !Array.isArray(value);
}

function toSqlValue(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" || typeof value === "string" || value instanceof Uint8Array) return value;
  throw new TypeError(`SQLite cannot bind a ${typeof value}: give numbers, strings, bigints, Buffers or null`);
}

function fromSqlValue(value: SqlValue): unknown {
  return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}
