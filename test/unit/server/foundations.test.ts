import { randomBytes } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { readConfig } from "../../../server/config.js";
import { compilePattern } from "../../../server/specs/pattern.js";
import { makeCursorCodec } from "../../../server/http/cursor.js";
import { makeIdGenerator } from "../../../server/ids.js";
import { openDb } from "../../../server/store/db.js";
import { migrate } from "../../../server/store/migrate.js";
import { makeSealer } from "../../../server/secrets/sealer.js";
import { MIGRATIONS } from "../../../server/store/migrations/index.js";
import { contentAddress, toCanonicalJson } from "../../../server/specs/canonical-json.js";
import { FakeClock } from "../../helpers/fake-clock.js";

describe("ids", () => {
  it("sort in creation order, also within one millisecond", () => {
    const clock = new FakeClock();
    const newId = makeIdGenerator(clock);
    const ids = Array.from({ length: 1000 }, (_, i) => {
      if (i % 100 === 0) clock.advance(1);
      return newId("run");
    });
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^run_[0-9a-z]{26}$/);
  });
});

describe("readConfig", () => {
  it("applies defaults", () => {
    const config = readConfig({});
    expect(config).toMatchObject({
      port: 3000,
      dbPath: "./data/assure.db",
      idempotencyWindowMs: 24 * 3_600_000,
      github: undefined,
    });
  });
  it("names every bad variable", () => {
    expect(() => readConfig({ PORT: "eighty", ASSURE_DB_SYNCHRONOUS: "OFF" })).toThrow(
      /PORT[\s\S]*ASSURE_DB_SYNCHRONOUS/,
    );
  });
  it("reads the shutdown delay: 0 unless set, refused when not a whole number of milliseconds up to 10 minutes", () => {
    expect(readConfig({}).shutdownDelayMs).toBe(0);
    expect(readConfig({ ASSURE_SHUTDOWN_DELAY_MS: "15000" }).shutdownDelayMs).toBe(15_000);
    for (const bad of ["-1", "1.5", "15s", "600001"]) {
      expect(() => readConfig({ ASSURE_SHUTDOWN_DELAY_MS: bad })).toThrow(/ASSURE_SHUTDOWN_DELAY_MS/);
    }
  });
  it("reads the egress allowlist", () => {
    expect(readConfig({ ASSURE_EGRESS_ALLOWLIST: " 10.0.0.0/8, agent.internal ," }).egressAllowlist).toEqual([
      "10.0.0.0/8",
      "agent.internal",
    ]);
  });
});

describe("cursor codec", () => {
  const codec = makeCursorCodec(Buffer.alloc(32, 7));
  const position = { created_at: "2026-01-01T00:00:00.000Z", id: "run_1" };
  it("round-trips a position for the same scope", () => {
    expect(codec.decode(codec.encode(position, "runs|a"), "runs|a")).toEqual(position);
  });
  it("refuses another scope or another secret", () => {
    const cursor = codec.encode(position, "runs|a");
    expect(() => codec.decode(cursor, "runs|b")).toThrow(/cursor/);
    expect(() => makeCursorCodec(Buffer.alloc(32, 8)).decode(cursor, "runs|a")).toThrow(/cursor/);
  });
});

describe("compilePattern", () => {
  it("turns PCRE-style leading flags into RegExp flags", () => {
    expect(compilePattern("(?i)refund").test("REFUND issued")).toBe(true);
    expect(compilePattern("refund").test("REFUND")).toBe(false);
  });
});

describe("canonical JSON", () => {
  it("does not depend on key order", () => {
    expect(toCanonicalJson({ b: 1, a: { d: [1, { y: 1, x: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":2,"y":1}]},"b":1}',
    );
    expect(contentAddress({ a: 1, b: 2 })).toBe(contentAddress({ b: 2, a: 1 }));
  });

  it("is RFC 8785's: keys in UTF-16 code-unit order, numbers as ECMAScript writes them", () => {
    // The sorting example of RFC 8785 §3.2.3: the emoji's surrogate pair sorts before U+FB33.
    const keys = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // (Read from the text: a parsed object would list the integer-like key "1" first.)
    expect([...toCanonicalJson(keys).matchAll(/:"([^"]+)"/g)].map((match) => match[1])).toEqual([
      "Carriage Return",
      "One",
      "Control",
      "Latin Small Letter O With Diaeresis",
      "Euro Sign",
      "Emoji: Grinning Face",
      "Hebrew Letter Dalet With Dagesh",
    ]);
    expect(toCanonicalJson([1e21, 1e-7, -0, 0.000001, Number("333333333.33333329"), 4.5])).toBe(
      "[1e+21,1e-7,0,0.000001,333333333.3333333,4.5]",
    );
  });

  it("refuses what I-JSON refuses, rather than writing text another implementation would not", () => {
    expect(() => toCanonicalJson({ a: "\ud800" })).toThrow(/surrogate/i);
    expect(() => toCanonicalJson([Number.NaN])).toThrow(/NaN/);
  });
});

describe("migrate", () => {
  const context = { sealer: makeSealer(randomBytes(32)) };

  it("tells an earlier evaluation's kind by who judged it, not by its metric id", () => {
    const clock = new FakeClock();
    const db = openDb(":memory:");
    migrate(
      db,
      clock,
      context,
      MIGRATIONS.filter((m) => m.version <= 3),
    );
    db.pragma("foreign_keys = OFF");
    const insert =
      db.prepare(`INSERT INTO evaluations (evaluation_id, run_id, metric_id, scope, score, threshold, status, judge, reason, evidence_refs, created_at)
      VALUES (?, 'run_1', ?, 'conversation', 1, 1, 'passed', ?, '', '[]', '')`);
    insert.run(
      "evl_1",
      "expect.tool_called",
      JSON.stringify({ provider: "assure", model: "deterministic-expectations@1" }),
    );
    insert.run("evl_2", "probe.injection", JSON.stringify({ provider: "assure", model: "security-probes@1" }));
    insert.run("evl_3", "expect.tone", JSON.stringify({ provider: "openai-compatible", model: "gpt-4o" })); // a spec metric of that name
    migrate(db, clock, context);
    expect(db.prepare("SELECT evaluation_id, kind FROM evaluations ORDER BY evaluation_id").all()).toEqual([
      { evaluation_id: "evl_1", kind: "expectation" },
      { evaluation_id: "evl_2", kind: "probe" },
      { evaluation_id: "evl_3", kind: "metric" },
    ]);
  });

  it("applies each migration once and refuses a database newer than the build", () => {
    const clock = new FakeClock();
    const db = openDb(":memory:");
    expect(migrate(db, clock, context)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(migrate(db, clock, context)).toEqual([]);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')").run();
    expect(() => migrate(db, clock, context)).toThrow(/newer than this build/);
  });
});
