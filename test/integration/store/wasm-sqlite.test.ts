import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadLocalSpec } from "../../../app/cli/local-spec.js";
import { evaluationsOf } from "../../../app/cli/test/run-results.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readConfig } from "../../../server/config.js";
import { openLocalRunner } from "../../../server/local/local-runner.js";
import { createLogger } from "../../../server/log.js";
import { openDb, type Db, type OpenDb } from "../../../server/store/db.js";
import { loadWasmSqlite } from "../../../server/store/wasm-db.js";
import { ROOT } from "../../helpers/assure-cli.js";

let openWasm: OpenDb;
beforeAll(async () => {
  openWasm = await loadWasmSqlite();
});

/** The same statements on both drivers must read back the same. */
const DRIVERS: [string, () => Db][] = [
  ["better-sqlite3", () => openDb(":memory:")],
  ["sql.js", () => openWasm(":memory:")],
];

describe.each(DRIVERS)("the store's SQLite API on %s", (_name, open) => {
  let db: Db;
  beforeAll(() => {
    db = open();
    expect(db.open).toBe(true);
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, data BLOB, n INTEGER) STRICT");
  });
  afterAll(() => {
    db.close();
  });

  it("binds values in order and by name without their prefix, and says what a write changed", () => {
    const first = db.prepare("INSERT INTO t (name, data, n) VALUES (?, ?, ?)").run("a", Buffer.from([1, 2, 3]), 7);
    expect(first).toEqual({ changes: 1, lastInsertRowid: 1 });
    const second = db.prepare("INSERT INTO t (name, n) VALUES (@name, :n)").run({ name: "b", n: null });
    expect(second).toEqual({ changes: 1, lastInsertRowid: 2 });
    expect(db.prepare("UPDATE t SET n = 1").run()).toEqual({ changes: 2, lastInsertRowid: 2 });
    expect(db.prepare("SELECT * FROM t WHERE name = ?").get("a")).toEqual({
      id: 1,
      name: "a",
      data: Buffer.from([1, 2, 3]),
      n: 1,
    });
    expect(Buffer.isBuffer(db.prepare("SELECT data FROM t WHERE id = 1").pluck().get() as Buffer)).toBe(true);
    expect(db.prepare("SELECT name FROM t ORDER BY id").pluck().all()).toEqual(["a", "b"]);
    expect(db.prepare("SELECT name FROM t WHERE id = 99").get()).toBeUndefined();
    expect(db.prepare("SELECT json_extract('{\"x\":[1,2]}', '$.x[1]') AS x").get()).toEqual({ x: 2 });
    expect(db.prepare("INSERT INTO t (name) VALUES (?) RETURNING id").pluck().get("c")).toBe(3);
  });

  it("undoes a savepoint whose function throws and keeps the transaction around it", () => {
    const insert = db.prepare("INSERT INTO t (name) VALUES (?)");
    const inner = db.transaction((name: string) => insert.run(name));
    const outer = db.transaction(() => {
      inner("kept");
      expect(() => inner("a")).toThrow(/UNIQUE/);
      expect(db.inTransaction).toBe(true);
      inner("kept too");
    });
    outer.immediate();
    expect(db.inTransaction).toBe(false);
    const names = db.prepare("SELECT name FROM t WHERE name LIKE 'kept%' ORDER BY name").pluck().all();
    expect(names).toEqual(["kept", "kept too"]);

    const failing = db.transaction(() => {
      insert.run("gone");
      throw new Error("stop");
    });
    expect(() => failing()).toThrow("stop");
    expect(db.inTransaction).toBe(false);
    expect(db.prepare("SELECT COUNT(*) FROM t WHERE name = 'gone'").pluck().get()).toBe(0);
  });

  it("refuses a value SQLite cannot store", () => {
    expect(() => db.prepare("SELECT ?").get(true)).toThrow(/bind/);
    expect(() => db.prepare("SELEC 1")).toThrow(/syntax/);
  });
});

describe("the engine on WebAssembly SQLite (what the Action runs in the job)", () => {
  let agent: ExampleAgent;
  beforeAll(async () => {
    agent = await startExampleAgent();
  });
  afterAll(() => agent.close());

  /** Runs the deterministic refund spec against the example agent; what each case's checks found. */
  async function runRefundSpec(driver?: OpenDb) {
    const runner = await openLocalRunner({
      config: readConfig({ ASSURE_LOG_LEVEL: "silent" }),
      log: createLogger({ level: "silent" }),
      openDb: driver,
    });
    try {
      const read = await loadLocalSpec(ROOT, join(ROOT, "examples/refund-agent-deterministic.yaml"));
      if (!read.ok) throw new Error(JSON.stringify(read.problems));
      const spec = await runner.addSpec(read.spec.version);
      const environmentId = await runner.useEndpoint({ protocol: "openai-chat", base_url: agent.baseUrl });
      const { runs, decision } = await runner.startRuns([spec], environmentId);
      while ((await runner.store.getDecision(decision.decision_id))!.status === "PENDING") await sleep(20);
      const run = (await runner.store.getRun(runs[0]!.run_id))!;
      const checks = (await evaluationsOf(runner.store, run.run_id))
        .map((e) => `${e.scenario_id} ${e.turn} ${e.metric_id} ${e.spec_path} ${e.status} ${e.score}`)
        .sort();
      return {
        status: run.status,
        verdict: run.verdict,
        decision: (await runner.store.getDecision(decision.decision_id))!.status,
        checks,
      };
    } finally {
      await runner.close();
    }
  }

  it("reaches the verdict and per-case results better-sqlite3 reaches", async () => {
    const native = await runRefundSpec();
    const wasm = await runRefundSpec(openWasm);
    expect(native.checks.length).toBeGreaterThan(10);
    expect(wasm).toEqual(native);
    expect(wasm).toMatchObject({ status: "COMPLETED", verdict: "PASS", decision: "ALLOWED" });
  });
});
