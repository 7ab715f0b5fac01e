// Scratch PostgreSQL databases for the benches that measure the service on PostgreSQL: one per
// measurement, with a random name, dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";

/** The server's maintenance database, where scratch databases are created (as the tests' ASSURE_TEST_DATABASE_URL). */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function onServer(sql) {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Why PostgreSQL cannot be used, or undefined when it answers. */
export async function postgresUnreachable() {
  try {
    await onServer("SELECT 1");
    return undefined;
  } catch (error) {
    return error.message || String(error);
  }
}

/** An empty database with a random name; `drop()` removes it, closing what is still connected. */
export async function createScratchDatabase() {
  const name = `assure_bench_${randomBytes(8).toString("hex")}`;
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The settings a service node needs on `database`; every node of one database gets the same key. */
export function postgresSettings(database, encryptionKey) {
  return { ASSURE_DATABASE_URL: database.url, ASSURE_ENCRYPTION_KEY: encryptionKey };
}

export const newEncryptionKey = () => randomBytes(32).toString("base64");
