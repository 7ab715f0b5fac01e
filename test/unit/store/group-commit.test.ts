import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { makeRecorder } from "../../../server/engine/recorder.js";
import { makeWorker } from "../../../server/engine/worker.js";
import { createLogger } from "../../../server/log.js";
import { makeIdGenerator } from "../../../server/ids.js";
import { openStore, type Store } from "../../../server/store/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";

describe("group commit and the run recorder", () => {
  let dir: string;
  let store: Store;
  const clock = new FakeClock();
  const newId = makeIdGenerator(clock);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "assure-group-commit-"));
    store = openStore(join(dir, "assure.db"), { clock });
    store.db.exec("CREATE TABLE probe (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)");
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (label: string) => () => store.db.prepare("INSERT INTO probe (label) VALUES (?)").run(label).lastInsertRowid;
  const labels = () => store.db.prepare("SELECT label FROM probe ORDER BY id").pluck().all();

  it("commits the writes of one tick together, in the order they were queued", async () => {
    const reader = new Database(join(dir, "assure.db"), { readonly: true });
    try {
      const seenByReader = () => reader.prepare("SELECT COUNT(*) FROM probe").pluck().get();
      let seenDuringLastWrite: unknown;
      const last = () => {
        seenDuringLastWrite = seenByReader(); // another connection: sees only committed rows
        return insert("c")();
      };
      const ids = await Promise.all([store.writeBatched(insert("a")), store.writeBatched(insert("b")), store.writeBatched(last)]);
      expect(ids).toEqual([1, 2, 3]);
      expect(seenDuringLastWrite).toBe(0); // "a" and "b" were not committed apart from "c"
      expect(seenByReader()).toBe(3);
      expect(labels()).toEqual(["a", "b", "c"]);
    } finally {
      reader.close();
    }
  });

  it("rejects a failing write alone and keeps the others of its batch", async () => {
    const outcomes = await Promise.allSettled([store.writeBatched(insert("a")), store.writeBatched(insert("a")), store.writeBatched(insert("b"))]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(labels()).toEqual(["a", "b"]);
  });

  it("holds a lazy write for the next ordinary one, or commits it after a short wait", async () => {
    const reader = new Database(join(dir, "assure.db"), { readonly: true });
    try {
      const seenByReader = () => reader.prepare("SELECT label FROM probe ORDER BY id").pluck().all();
      const lazy = store.writeBatchedLazily(insert("lazy"));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seenByReader()).toEqual([]); // no commit of its own yet
      await store.writeBatched(insert("ordinary"));
      await lazy;
      expect(seenByReader()).toEqual(["lazy", "ordinary"]); // committed with it, in queue order

      const alone = store.writeBatchedLazily(insert("alone"));
      await alone; // nobody else writes: it commits on its own within a few ms
      expect(seenByReader()).toEqual(["lazy", "ordinary", "alone"]);

      void store.writeBatchedLazily(insert("at close")).catch(() => undefined);
      store.close(); // commits what is queued before closing
      expect(seenByReader()).toEqual(["lazy", "ordinary", "alone", "at close"]);
    } finally {
      reader.close();
    }
  });

  it("makes background writes durable by the next awaited flush, and reports their failure there", async () => {
    const recorder = makeRecorder(store, "run_unknown", clock, newId);
    recorder.flushInBackground(insert("first"));
    expect(labels()).toEqual([]); // queued, not yet written
    await recorder.flush(insert("second"));
    expect(labels()).toEqual(["first", "second"]);

    recorder.flushInBackground(insert("first")); // breaks the UNIQUE constraint
    // SqliteError may come from another realm under jest's ESM runner: match its message, not its class.
    await expect(recorder.flush(insert("third"))).rejects.toMatchObject({ message: expect.stringMatching(/UNIQUE/) });
    expect(labels()).toEqual(["first", "second", "third"]);
  });
});

describe("a worker stopping while its claim is being committed", () => {
  it("puts the claimed jobs back at once, without using an attempt, and runs none of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-claim-stop-"));
    const clock = new FakeClock();
    const store = openStore(join(dir, "assure.db"), { clock });
    try {
      const runAt = clock.now().toISOString();
      for (const key of ["a", "b"]) store.enqueueJob({ task: "probe", job_key: key, payload: {}, run_at: runAt, max_attempts: 3 });
      const ran: unknown[] = [];
      const worker = makeWorker({ store, clock, log: createLogger({ level: "silent" }), tasks: { probe: async (payload) => void ran.push(payload) }, concurrency: 2 });
      worker.start(); // queues the claim for the next group commit
      await worker.stop(0); // before that commit lands
      expect(ran).toEqual([]);
      const jobs = store.db.prepare("SELECT job_key, state, attempts, locked_by, last_error FROM jobs ORDER BY job_key").all();
      expect(jobs).toEqual([
        { job_key: "a", state: "queued", attempts: 0, locked_by: null, last_error: "released on shutdown" },
        { job_key: "b", state: "queued", attempts: 0, locked_by: null, last_error: "released on shutdown" },
      ]);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
