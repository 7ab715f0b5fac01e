import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import Database from "better-sqlite3";
import pg from "pg";
import { postgresDialect, sqliteDialect, type Dialect } from "../../../server/store/sql/dialect.js";

// Each fragment runs on both databases with the same literal inputs: they must answer alike.
const POSTGRES_URL = process.env.ASSURE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const scratch = `assure_dialect_${randomBytes(6).toString("hex")}`;

const sqlite = new Database(":memory:");
let admin: pg.Client;
let postgres: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${scratch}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${scratch}`;
  postgres = new pg.Client({ connectionString: url.toString() });
  await postgres.connect();
});

afterAll(async () => {
  sqlite.close();
  await postgres?.end();
  await admin?.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await admin?.end();
});

/** The rows of the query each dialect writes, from SQLite and from PostgreSQL. */
async function rowsOfBoth(query: (dialect: Dialect) => string): Promise<[unknown[], unknown[]]> {
  const fromSqlite = sqlite.prepare(query(sqliteDialect)).all();
  const fromPostgres = (await postgres.query(query(postgresDialect))).rows as unknown[];
  return [fromSqlite, fromPostgres];
}

/** The one value `SELECT <expression>` answers, from SQLite and from PostgreSQL. */
async function valueOfBoth(expression: (dialect: Dialect) => string): Promise<[unknown, unknown]> {
  const [[fromSqlite], [fromPostgres]] = await rowsOfBoth((d) => `SELECT ${expression(d)} AS value`);
  return [(fromSqlite as { value: unknown }).value, (fromPostgres as { value: unknown }).value];
}

const parsed = (value: unknown) => JSON.parse(value as string) as unknown;
const literal = (json: unknown) => `'${JSON.stringify(json).replaceAll("'", "''")}'`;

const document = {
  ref: "refs/heads/main",
  quoted: "it's",
  model: { name: "gpt", version: "4" },
  usage: { input_tokens: 12, output_tokens: 30, cost: 0.25 },
  none: null,
  yes: true,
  no: false,
  list: [1, 2],
};

describe("the SQL dialects", () => {
  it("read a string at a path alike, NULL when it is missing or JSON null", async () => {
    for (const path of ["$.ref", "$.quoted", "$.model.name", "$.none", "$.missing", "$.model.missing"]) {
      const [fromSqlite, fromPostgres] = await valueOfBoth((d) => d.jsonText(literal(document), path));
      expect({ path, value: fromPostgres }).toEqual({ path, value: fromSqlite });
    }
    const [ref] = await valueOfBoth((d) => d.jsonText(literal(document), "$.ref"));
    expect(ref).toBe("refs/heads/main");
  });

  it("read a number at a path alike, and sum it alike", async () => {
    for (const path of ["$.usage.input_tokens", "$.usage.cost", "$.none", "$.usage.missing"]) {
      const [fromSqlite, fromPostgres] = await valueOfBoth((d) => d.jsonNumber(literal(document), path));
      expect({ path, value: fromPostgres }).toEqual({ path, value: fromSqlite });
    }
    const answers = [{ usage: { input_tokens: 5 } }, { usage: { input_tokens: 7 } }, { usage: null }];
    const [sums, sumsOnPostgres] = await rowsOfBoth(
      (d) =>
        `SELECT COALESCE(SUM(${d.jsonNumber("data", "$.usage.input_tokens")}), 0) AS total FROM (${answers
          .map((answer) => `SELECT ${literal(answer)} AS data`)
          .join(" UNION ALL ")}) AS answers`,
    );
    expect(sums).toEqual([{ total: 12 }]);
    expect(sumsOnPostgres).toEqual(sums);
  });

  it("name the type of a value at a path alike", async () => {
    const values = { n: null, t: true, f: false, i: 3, r: 1.5, s: "x", a: [1], o: { k: 1 } };
    const types: Record<string, unknown> = {};
    for (const path of [...Object.keys(values).map((key) => `$.${key}`), "$.missing"]) {
      const [fromSqlite, fromPostgres] = await valueOfBoth((d) => d.jsonType(literal(values), path));
      expect({ path, type: fromPostgres }).toEqual({ path, type: fromSqlite });
      types[path] = fromSqlite;
    }
    expect(types).toEqual({
      "$.n": "null",
      "$.t": "true",
      "$.f": "false",
      "$.i": "integer",
      "$.r": "real",
      "$.s": "text",
      "$.a": "array",
      "$.o": "object",
      "$.missing": null,
    });
  });

  it("build the same JSON object, with JSON values nested as JSON", async () => {
    const [fromSqlite, fromPostgres] = await valueOfBoth((d) =>
      d.jsonObject({
        count: "3",
        share: "0.5",
        name: "CAST('it''s' AS TEXT)",
        none: "NULL",
        list: d.json(literal([1, "two"])),
        nested: d.json(d.jsonObject({ inner: "CAST('x' AS TEXT)" })),
      }),
    );
    const expected = { count: 3, share: 0.5, name: "it's", none: null, list: [1, "two"], nested: { inner: "x" } };
    expect(parsed(fromSqlite)).toEqual(expected);
    expect(parsed(fromPostgres)).toEqual(expected);
  });

  it("aggregate rows into the same JSON object, {} for no rows", async () => {
    const rows = "SELECT 'a' AS k, '{\"x\":1}' AS v UNION ALL SELECT 'b', '{\"x\":[2]}'";
    const [[fromSqlite], [fromPostgres]] = await rowsOfBoth(
      (d) => `SELECT ${d.jsonObjectAgg("k", d.json("v"))} AS value FROM (${rows}) AS pairs`,
    );
    const expected = { a: { x: 1 }, b: { x: [2] } };
    expect(parsed((fromSqlite as { value: string }).value)).toEqual(expected);
    expect(parsed((fromPostgres as { value: string }).value)).toEqual(expected);

    const [[none], [noneOnPostgres]] = await rowsOfBoth(
      (d) => `SELECT ${d.jsonObjectAgg("k", d.json("v"))} AS value FROM (${rows}) AS pairs WHERE k = 'c'`,
    );
    expect(parsed((none as { value: string }).value)).toEqual({});
    expect(parsed((noneOnPostgres as { value: string }).value)).toEqual({});
  });

  it("iterate a JSON array's elements alike", async () => {
    const ids = literal(["conv_b", "conv_a", "it's"]);
    const [fromSqlite, fromPostgres] = await rowsOfBoth((d) => `${d.jsonArrayValues(ids)} ORDER BY value`);
    expect(fromSqlite).toEqual([{ value: "conv_a" }, { value: "conv_b" }, { value: "it's" }]);
    expect(fromPostgres).toEqual(fromSqlite);

    const [found, foundOnPostgres] = await valueOfBoth(
      (d) => `CASE WHEN 'conv_a' IN (${d.jsonArrayValues(ids)}) THEN 1 ELSE 0 END`,
    );
    expect([found, foundOnPostgres]).toEqual([1, 1]);
  });

  it("make random lower-case hex of the length asked", async () => {
    const [first, firstOnPostgres] = await valueOfBoth((d) => `'dlv_' || ${d.randomHex(13)}`);
    const [second, secondOnPostgres] = await valueOfBoth((d) => `'dlv_' || ${d.randomHex(13)}`);
    for (const id of [first, firstOnPostgres, second, secondOnPostgres]) expect(id).toMatch(/^dlv_[0-9a-f]{26}$/);
    expect(second).not.toBe(first);
    expect(secondOnPostgres).not.toBe(firstOnPostgres);
    expect(() => postgresDialect.randomHex(17)).toThrow();
  });

  it("list the database's tables alike", async () => {
    sqlite.exec("CREATE TABLE example_rows (id TEXT PRIMARY KEY)");
    await postgres.query("CREATE TABLE example_rows (id TEXT PRIMARY KEY)");
    const [fromSqlite, fromPostgres] = await rowsOfBoth(
      (d) => `SELECT name FROM (${d.tableNames}) AS tables WHERE name LIKE 'example%' ORDER BY name`,
    );
    expect(fromSqlite).toEqual([{ name: "example_rows" }]);
    expect(fromPostgres).toEqual(fromSqlite);
  });

  it("refuse a JSON path they cannot both read", () => {
    for (const dialect of [sqliteDialect, postgresDialect]) {
      expect(() => dialect.jsonText("data", "$.list[0]")).toThrow();
      expect(() => dialect.jsonNumber("data", "usage.total")).toThrow();
    }
  });
});
