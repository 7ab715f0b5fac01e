import { AsyncLocalStorage } from "node:async_hooks";
import type { Db, Statement } from "../db.js";
import { TransactionLostError, type Sql, type SqlStatement, type TransactionOptions } from "./sql.js";
import { sqliteDialect } from "./dialect.js";

/**
 * SQLite behind the store's asynchronous door. Statements run at once on the one connection
 * (better-sqlite3 or the WebAssembly driver); a transaction holds the connection: a statement
 * from outside it waits until it ends, rather than running inside someone else's transaction.
 */
export function sqliteSql(db: Db): Sql {
  const frames = new AsyncLocalStorage<{ savepoints: number }>();
  let holder: Promise<void> = Promise.resolve();
  let holders = 0; // chains holding the connection or waiting to

  /** Runs `work` once no other chain holds the connection, holding it meanwhile. */
  async function holding<T>(work: () => Promise<T>): Promise<T> {
    const previous = holder;
    let release!: () => void;
    holder = new Promise((resolve) => (release = resolve));
    holders++;
    try {
      await previous;
      return await work();
    } finally {
      holders--;
      release();
    }
  }

  /** Runs a statement now, or after the transaction another chain holds. */
  function when<T>(read: () => T): Promise<T> {
    if (holders > 0 && !frames.getStore()) return holding(async () => read());
    try {
      return Promise.resolve(read());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  function statementOf(sql: string, statement: Statement): SqlStatement {
    let plucked: SqlStatement | undefined;
    return {
      get: <Row>(...params: unknown[]) => when(() => statement.get(...params) as Row | undefined),
      all: <Row>(...params: unknown[]) => when(() => statement.all(...params) as Row[]),
      run: (...params: unknown[]) => when(() => ({ changes: statement.run(...params).changes })),
      pluck: () => (plucked ??= statementOf(sql, db.prepare(sql).pluck())),
    };
  }

  return {
    kind: "sqlite",
    dialect: sqliteDialect,
    prepare: (sql) => statementOf(sql, db.prepare(sql)),
    exec: (sql) => when(() => void db.exec(sql)),
    get inTransaction() {
      return frames.getStore() !== undefined;
    },
    async transaction<T>(work: () => Promise<T>, { immediate = false }: TransactionOptions = {}): Promise<T> {
      const frame = frames.getStore();
      if (frame) {
        const name = `assure_${++frame.savepoints}`;
        db.exec(`SAVEPOINT ${name}`);
        try {
          const result = await work();
          db.exec(`RELEASE ${name}`);
          return result;
        } catch (error) {
          // Some failures (disk full, I/O) roll back the whole transaction, savepoints with it.
          if (!db.inTransaction) throw new TransactionLostError(error);
          db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
          throw error;
        }
      }
      return holding(() =>
        frames.run({ savepoints: 0 }, async () => {
          db.exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN");
          try {
            const result = await work();
            db.exec("COMMIT");
            return result;
          } catch (error) {
            if (db.inTransaction) db.exec("ROLLBACK");
            throw error;
          }
        }),
      );
    },
    async close() {
      await holder;
      if (db.open) db.close();
    },
  };
}
