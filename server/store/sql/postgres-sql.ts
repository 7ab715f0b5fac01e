import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { postgresDialect } from "./dialect.js";
import { numberParameters, type NumberedStatement } from "./numbered-parameters.js";
import { TransactionLostError, type Sql, type SqlStatement } from "./sql.js";

export interface PostgresOptions {
  /** postgres://user:password@host:port/database (libpq's URL, `sslmode` included). */
  connectionString: string;
  /** Connections this process keeps open at most (`pg.Pool`'s `max`). */
  maxConnections?: number;
  /** The name the server shows for this process's connections (pg_stat_activity). */
  applicationName?: string;
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Numbers come back as the store reads them from SQLite: COUNT and SUM answer int8 and numeric,
 * which node-postgres leaves as strings (they may not fit a double). Every number the store keeps
 * does fit — ids, counts, bytes, milliseconds — so they are read as numbers, and one that would
 * lose precision fails loudly instead.
 */
function parseWholeNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`${text} does not fit a JavaScript number exactly`);
  return value;
}

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return parseWholeNumber;
    if (oid === NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
};

function poolOf(options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ ...options, types });
  // An idle connection the server drops (a restart, a failover) is an error on the pool: it is
  // replaced on the next query; without a listener it would end the process.
  pool.on("error", () => {});
  return pool;
}

/**
 * The rate limits' own small pool on the store's database (server/limits/shared-limiters.ts counts
 * in it): a request's count never waits behind the store's queries, nor for long on a database
 * that does not answer — the limits then count in memory until it does.
 */
export function rateLimitPool(connectionString: string): pg.Pool {
  return poolOf({
    connectionString,
    max: 2,
    application_name: "assure (rate limits)",
    connectionTimeoutMillis: 2_000,
    query_timeout: 2_000,
  });
}

/** Whether `table` exists: looked up before creating it, a role that may not create tables still starts once it does. */
export async function postgresTableExists(pool: pg.Pool, table: string): Promise<boolean> {
  const { rows } = await pool.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table]);
  return rows[0]?.found === true;
}

/**
 * PostgreSQL behind the store's asynchronous door (node-postgres' pool). A statement outside a
 * transaction runs on any pooled connection; inside one, on the transaction's. Each statement is
 * prepared once per connection (a named statement), as better-sqlite3 prepares it once.
 */
export function postgresSql({
  connectionString,
  maxConnections = 10,
  applicationName = "assure",
}: PostgresOptions): Sql {
  const pool = poolOf({ connectionString, max: maxConnections, application_name: applicationName });
  const frames = new AsyncLocalStorage<{ client: pg.PoolClient; savepoints: number }>();
  const names = new Map<string, string>();

  const clientOf = (): pg.Pool | pg.PoolClient => frames.getStore()?.client ?? pool;

  function statementOf(numbered: NumberedStatement, name: string, pluck: boolean): SqlStatement {
    const query = (params: unknown[]) =>
      clientOf().query<Record<string, unknown>>({
        name,
        text: numbered.text,
        values: numbered.bind(params),
        ...(pluck ? { rowMode: "array" as const } : {}),
      });
    const rowOf = (row: unknown) => (pluck ? (row as unknown[])[0] : row);
    return {
      get: async <Row>(...params: unknown[]) => {
        const { rows } = await query(params);
        return rows.length > 0 ? (rowOf(rows[0]) as Row) : undefined;
      },
      all: async <Row>(...params: unknown[]) => (await query(params)).rows.map(rowOf) as Row[],
      run: async (...params: unknown[]) => ({ changes: (await query(params)).rowCount ?? 0 }),
      pluck: () => statementOf(numbered, name, true),
    };
  }

  return {
    kind: "postgres",
    dialect: postgresDialect,
    prepare(sql) {
      let name = names.get(sql);
      if (name === undefined) {
        name = `assure_${names.size + 1}`;
        names.set(sql, name);
      }
      return statementOf(numberParameters(sql), name, false);
    },
    async exec(sql) {
      await clientOf().query(sql);
    },
    get inTransaction() {
      return frames.getStore() !== undefined;
    },
    async transaction<T>(work: () => Promise<T>): Promise<T> {
      const frame = frames.getStore();
      if (frame) {
        const name = `assure_${++frame.savepoints}`;
        await frame.client.query(`SAVEPOINT ${name}`);
        try {
          const result = await work();
          await frame.client.query(`RELEASE SAVEPOINT ${name}`);
          return result;
        } catch (error) {
          try {
            await frame.client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
          } catch {
            throw new TransactionLostError(error);
          }
          throw error;
        }
      }
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return await frames.run({ client, savepoints: 0 }, async () => {
          await client.query("BEGIN");
          try {
            const result = await work();
            await client.query("COMMIT");
            return result;
          } catch (error) {
            try {
              await client.query("ROLLBACK");
            } catch (rollbackFailed) {
              broken = rollbackFailed as Error; // the connection is gone: the server rolled back
            }
            throw error;
          }
        });
      } finally {
        client.release(broken);
      }
    },
    async close() {
      await pool.end();
    },
  };
}
