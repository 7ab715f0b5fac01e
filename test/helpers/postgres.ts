import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the tests use: its maintenance database, where scratch databases are created. */
export const TEST_DATABASE_URL = process.env.ASSURE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A database of its own for one test, on the test server. */
export interface ScratchDatabase {
  name: string;
  /** The connection string of this database. */
  url: string;
  /** Drops it, closing whatever connections are left. */
  drop(): Promise<void>;
}

async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates an empty database with a random name. */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `assure_test_${randomBytes(8).toString("hex")}`;
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Runs `use` on a fresh database, dropped afterwards whatever happens. */
export async function withScratchDatabase<T>(use: (database: ScratchDatabase) => Promise<T>): Promise<T> {
  const database = await createScratchDatabase();
  try {
    return await use(database);
  } finally {
    await database.drop();
  }
}

/** A client connected to `database`, closed after `use`. */
export async function withClient<T>(database: ScratchDatabase, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
