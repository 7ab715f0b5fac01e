import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { failingWith } from "../../helpers/failing-with.js";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDb } from "../../../server/store/db.js";
import { numberParameters } from "../../../server/store/sql/numbered-parameters.js";
import { postgresSql } from "../../../server/store/sql/postgres-sql.js";
import type { Sql } from "../../../server/store/sql/sql.js";
import { sqliteSql } from "../../../server/store/sql/sqlite-sql.js";

const SERVER_URL = process.env.ASSURE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

describe("numberParameters", () => {
  it("numbers named and positional parameters, a repeated name once", () => {
    const statement = numberParameters("SELECT * FROM t WHERE a = @a AND b = ? AND c = @a AND d = ?");
    expect(statement.text).toBe("SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $1 AND d = $3");
    expect(statement.bind([{ a: "x" }, 1, [2]])).toEqual(["x", 1, 2]);
  });

  it("leaves literals, quoted identifiers and comments alone", () => {
    const statement = numberParameters(`SELECT 'a@b ?', "col@x?", 'it''s @c' -- @d ?\n, @e /* ? @f */ FROM t`);
    expect(statement.text).toBe(`SELECT 'a@b ?', "col@x?", 'it''s @c' -- @d ?\n, $1 /* ? @f */ FROM t`);
  });

  it("refuses a missing named parameter and too few positional ones, as better-sqlite3 does", () => {
    expect(() => numberParameters("SELECT @a").bind([{ b: 1 }])).toThrow('Missing named parameter "a"');
    expect(() => numberParameters("SELECT ?, ?").bind([1])).toThrow("Too few parameter values");
  });
});

async function scratchPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `assure_sql_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

describe.each(["sqlite", "postgres"] as const)("Sql on %s", (kind) => {
  let sql: Sql;
  let drop: () => Promise<void> = async () => {};

  beforeEach(async () => {
    if (kind === "sqlite") {
      sql = sqliteSql(openDb(":memory:"));
    } else {
      const scratch = await scratchPostgres();
      drop = scratch.drop;
      sql = postgresSql({ connectionString: scratch.url, maxConnections: 4 });
    }
    await sql.exec("CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)");
  });

  afterEach(async () => {
    await sql.close();
    await drop();
  });

  const insert = () => sql.prepare("INSERT INTO items (id, n) VALUES (@id, @n)");
  const count = async () => (await sql.prepare("SELECT COUNT(*) AS c FROM items").get<{ c: number }>())!.c;

  it("reads and writes with better-sqlite3's parameters; counts and sums are numbers", async () => {
    expect(await insert().run({ id: "a", n: 1 })).toEqual({ changes: 1 });
    await insert().run({ id: "b", n: 2 });
    expect(await sql.prepare("SELECT id, n FROM items WHERE n > ? ORDER BY id").all(0)).toEqual([
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ]);
    expect(await sql.prepare("SELECT id FROM items WHERE id = @id").pluck().get({ id: "b" })).toBe("b");
    expect(await sql.prepare("SELECT id FROM items WHERE id = ?").get("zz")).toBeUndefined();
    expect(await sql.prepare("SELECT COUNT(*) AS c, SUM(n) AS s FROM items").get()).toEqual({ c: 2, s: 3 });
    expect(await sql.prepare("UPDATE items SET n = n + 1").run()).toEqual({ changes: 2 });
  });

  it("commits a transaction's writes together, or none of them", async () => {
    await sql.transaction(async () => {
      expect(sql.inTransaction).toBe(true);
      await insert().run({ id: "a", n: 1 });
      await insert().run({ id: "b", n: 2 });
    });
    expect(sql.inTransaction).toBe(false);
    await expect(
      sql.transaction(async () => {
        await insert().run({ id: "c", n: 3 });
        await insert().run({ id: "a", n: 4 }); // a duplicate key
      }),
    ).rejects.toMatchObject(failingWith(/UNIQUE constraint failed|duplicate key/));
    expect(await count()).toBe(2);
  });

  it("undoes a failed inner transaction alone (a savepoint)", async () => {
    await sql.transaction(async () => {
      await insert().run({ id: "a", n: 1 });
      await expect(
        sql.transaction(async () => {
          await insert().run({ id: "b", n: 2 });
          throw new Error("inner failed");
        }),
      ).rejects.toThrow("inner failed");
      await insert().run({ id: "c", n: 3 });
    });
    expect(await sql.prepare("SELECT id FROM items ORDER BY id").pluck().all()).toEqual(["a", "c"]);
  });

  it("shows no one a transaction's writes before it commits", async () => {
    let seenInside = -1;
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    const transaction = sql.transaction(async () => {
      await insert().run({ id: "a", n: 1 });
      await waiting;
    });
    // Outside the transaction: either not yet committed (PostgreSQL) or held back until it ends (SQLite).
    const outside = count().then((c) => (seenInside = c));
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await transaction;
    await outside;
    expect(seenInside).toBe(kind === "sqlite" ? 1 : 0);
    expect(await count()).toBe(1);
  });

  it("runs transactions of concurrent callers one after another, each on its own", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sql
          .transaction(async () => {
            await insert().run({ id: `k${i}`, n: i });
            await new Promise((resolve) => setImmediate(resolve));
            if (i % 2 === 1) throw new Error("odd ones fail");
          })
          .catch(() => undefined),
      ),
    );
    expect(await sql.prepare("SELECT id FROM items ORDER BY id").pluck().all()).toEqual(["k0", "k2", "k4", "k6"]);
  });
});
