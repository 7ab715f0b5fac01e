import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { failingWith } from "../../helpers/failing-with.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { makeRecorder } from "../../../server/engine/recorder.js";
import { makeWorker } from "../../../server/engine/worker.js";
import { createLogger } from "../../../server/log.js";
import { makeIdGenerator } from "../../../server/ids.js";
import { openStore } from "../../../server/store/index.js";
import { openServiceStore, type ServiceStore } from "../../../server/store/service-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { waitFor } from "../../helpers/wait.js";
import { insertQueuedRun } from "../../helpers/store-rows.js";

const clock = new FakeClock();
const newId = makeIdGenerator(clock);
const at = clock.now().toISOString();
const project = (name: string) =>
  ["createProject", { project_id: `prj_${name}`, name, description: null, created_at: at }] as const;
const agentOf = (projectId: string) =>
  [
    "createAgent",
    { agent_id: newId("agent"), project_id: projectId, name: "a", version: "1", description: null, created_at: at },
  ] as const;

/** The queued run "run_1" and what it stands on, written through a connection of its own. */
/** An event a test can record anywhere: which one it is, it says in `reason`. */
const note = (reason: string) => ({ attempt: 1, interrupted_conversations: 0, reason });

async function seedRun(path: string): Promise<void> {
  const seed = await openStore(path, { clock });
  try {
    await insertQueuedRun(seed, at);
  } finally {
    await seed.close();
  }
}

describe("the service store: reads here, writes in the writer thread", () => {
  let dir: string;
  let path: string;
  let store: ServiceStore;
  let reader: Database.Database; // another connection: sees only what is committed

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-service-store-"));
    path = join(dir, "assure.db");
    store = await openServiceStore(path, { clock });
    reader = new Database(path, { readonly: true });
  });
  afterEach(async () => {
    reader.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const committedNames = () => reader.prepare("SELECT name FROM projects ORDER BY rowid").pluck().all();

  it("commits the writes of one tick together, in the order they were made, and resolves once they are durable", async () => {
    const before = store.stats.commits;
    const written = await Promise.all([
      store.write(project("a")),
      store.write(project("b")),
      store.write(project("c")),
    ]);
    expect(written.map(([created]) => (created?.kind === "bound" ? created.project.name : undefined))).toEqual([
      "a",
      "b",
      "c",
    ]);
    expect(store.stats.commits - before).toBe(1);
    expect(committedNames()).toEqual(["a", "b", "c"]);
    expect((await store.getProjectByName("b"))?.project_id).toBe("prj_b"); // this thread's connection sees it too
  });

  it("applies the commands of one write all or none, and fails a write alone", async () => {
    const outcomes = await Promise.allSettled([
      store.write(project("a")),
      store.write(project("b"), agentOf("prj_missing")), // the agent breaks a foreign key: "b" is undone with it
      store.write(project("c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
      message: expect.stringMatching(/FOREIGN KEY/),
      code: "SQLITE_CONSTRAINT_FOREIGNKEY",
    });
    expect(committedNames()).toEqual(["a", "c"]);
  });

  it("fails a write that cannot be sent to the writer thread, and only that one", async () => {
    const unsendable = [
      "createProject",
      { project_id: "prj_f", name: "f", description: (() => "a function") as unknown as string, created_at: at },
    ] as const;
    const outcomes = await Promise.allSettled([
      store.write(project("a")),
      store.write(unsendable),
      store.write(project("b")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/could not be cloned/);
    expect(committedNames()).toEqual(["a", "b"]);
  });

  it("holds a lazy write for the next ordinary one, or sends it after a short wait", async () => {
    await store.close();
    store = await openServiceStore(path, { clock, lazyCommitMs: 60_000 }); // its wait never ends on its own here
    const ordinary = store.write(project("ordinary"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.stats).toMatchObject({ queued: 0, inFlight: 1 }); // an ordinary write goes at the end of its tick
    await ordinary;

    const lazy = store.writeLazily(project("lazy"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.stats).toMatchObject({ queued: 1, inFlight: 0 }); // a lazy one is held
    await store.write(project("carrier"));
    await lazy;
    expect(committedNames()).toEqual(["ordinary", "lazy", "carrier"]); // committed with it, in order

    void store.writeLazily(project("at close")).catch(() => undefined);
    await store.close(); // commits what is queued before stopping
    expect(committedNames()).toEqual(["ordinary", "lazy", "carrier", "at close"]);
    await expect(store.write(project("after close"))).rejects.toThrow(/closing|exited/);

    store = await openServiceStore(path, { clock, lazyCommitMs: 1 });
    await store.writeLazily(project("alone")); // nobody else writes: it goes on its own after lazyCommitMs
    expect(committedNames()).toEqual(["ordinary", "lazy", "carrier", "at close", "alone"]);
  });

  it("offers every write only as a command to the writer thread, never as a method", async () => {
    // @ts-expect-error a write is not a method of the service store: it is sent with store.write(["createProject", …])
    expect(store.createProject).toBeUndefined();
    expect(
      Object.keys(store).filter((name) =>
        /^(create|insert|append|claim|release|complete|renew|reclaim|finish|interrupt|revoke|add|update|transition)/.test(
          name,
        ),
      ),
    ).toEqual([]);
    await store.write(project("typed"));
    expect(committedNames()).toEqual(["typed"]);
  });

  it("never writes on the service's own connection", async () => {
    await expect(
      store.sql.prepare("INSERT INTO projects (project_id, name, created_at) VALUES ('prj_x', 'x', 'now')").run(),
    ).rejects.toMatchObject(failingWith(/readonly/));
    expect(committedNames()).toEqual([]);
  });

  it("stops a run's work at the first failed write, reports that failure, and continues the log where it ends", async () => {
    await seedRun(path);
    const recorder = await makeRecorder({ store, runId: "run_1", clock, newId });
    recorder.record("run.resumed", note("first"));
    await recorder.flush();

    recorder.record("run.resumed", note("lost"));
    recorder.flushInBackground(agentOf("prj_missing")); // breaks a foreign key: "lost" goes with it
    recorder.record("run.resumed", note("after")); // sequence 3: no longer follows the log, which ends at 1
    recorder.flushInBackground();
    await store.write(); // both background writes have now been tried
    expect(() => recorder.throwIfFailed()).toThrow(/FOREIGN KEY/);
    await expect(recorder.flush()).rejects.toThrow(/FOREIGN KEY/); // the cause, not the follow-on refusal

    await recorder.settle();
    expect(() => recorder.throwIfFailed()).not.toThrow();
    recorder.record("run.resumed", note("resumed"));
    await recorder.flush();
    expect((await store.listEvents("run_1", 0, 10)).map((e) => [e.sequence, JSON.parse(e.data).reason])).toEqual([
      [1, "first"],
      [2, "resumed"],
    ]);
  });

  it("waits for another process's write to finish instead of failing the batch", async () => {
    await seedRun(path);
    const other = new Database(path);
    try {
      other.prepare("BEGIN IMMEDIATE").run(); // the CLI, say, in the middle of a write
      other.prepare("UPDATE runs SET updated_at = ? WHERE run_id = 'run_1'").run(at);
      const recorder = await makeRecorder({ store, runId: "run_1", clock, newId });
      recorder.record("run.resumed", note("note"));
      const busySince = store.stats.busyMs;
      const write = recorder.flush(); // reads the log's end, then appends: must not read a stale snapshot
      let settled = false;
      write.then(
        () => (settled = true),
        () => (settled = true),
      );
      // The thread has nothing else to do: busy this long, it is waiting for the lock `other` holds.
      await waitFor(() => settled || store.stats.busyMs - busySince >= 50, "the writer thread to wait for the lock");
      expect(settled).toBe(false);
      other.prepare("COMMIT").run();
      await write;
      expect((await store.listEvents("run_1", 0, 10)).map((e) => JSON.parse(e.data).reason)).toEqual(["note"]);
    } finally {
      other.close();
    }
  });

  it("makes background writes durable by the next awaited flush, and reports their failure there", async () => {
    const recorder = await makeRecorder({ store, runId: "run_unknown", clock, newId });
    recorder.flushInBackground(project("first"));
    expect(committedNames()).toEqual([]); // queued, not yet written
    await recorder.flush(project("second"));
    expect(committedNames()).toEqual(["first", "second"]);

    recorder.record("run.resumed", note("note"));
    recorder.flushInBackground(); // its events break a foreign key
    await expect(recorder.flush(project("third"))).rejects.toMatchObject({
      message: expect.stringMatching(/FOREIGN KEY/),
    });
    expect(committedNames()).toEqual(["first", "second", "third"]);
  });
});

describe("opening the service store", () => {
  it("refuses an in-memory database, which its two threads could not share", async () => {
    await expect(openServiceStore(":memory:", { clock })).rejects.toThrow(/database file/);
  });
});

describe("a worker stopping while its claim is being committed", () => {
  it("puts the claimed jobs back at once, without using an attempt, and runs none of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-claim-stop-"));
    const path = join(dir, "assure.db");
    const seed = await openStore(path, { clock });
    for (const key of ["a", "b"]) {
      await seed.enqueueJob({ task: "probe", job_key: key, payload: {}, run_at: at, max_attempts: 3 });
    }
    await seed.close();
    const store = await openServiceStore(path, { clock });
    try {
      const ran: unknown[] = [];
      const worker = makeWorker({
        store,
        clock,
        log: createLogger({ level: "silent" }),
        tasks: { probe: async (payload) => void ran.push(payload) },
        concurrency: 2,
      });
      worker.start(); // sends the claim to the writer thread
      await worker.stop(0); // before its commit is acknowledged
      expect(ran).toEqual([]);
      const jobs = await store.sql
        .prepare("SELECT job_key, state, attempts, locked_by, last_error FROM jobs ORDER BY job_key")
        .all();
      expect(jobs).toEqual([
        { job_key: "a", state: "queued", attempts: 0, locked_by: null, last_error: "released on shutdown" },
        { job_key: "b", state: "queued", attempts: 0, locked_by: null, last_error: "released on shutdown" },
      ]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a worker paused as the service drains", () => {
  it("finishes the job in hand and claims no other", async () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-claim-pause-"));
    const path = join(dir, "assure.db");
    const seed = await openStore(path, { clock });
    for (const key of ["a", "b"]) {
      await seed.enqueueJob({ task: "probe", job_key: key, payload: key, run_at: at, max_attempts: 3 });
    }
    await seed.close();
    const store = await openServiceStore(path, { clock });
    const ran: unknown[] = [];
    let finish = () => {};
    const inHand = new Promise<void>((resolve) => (finish = resolve));
    const worker = makeWorker({
      store,
      clock,
      log: createLogger({ level: "silent" }),
      tasks: {
        probe: async (payload) => {
          ran.push(payload);
          await inHand;
        },
      },
      concurrency: 1,
    });
    try {
      worker.start();
      await waitFor(() => ran.length === 1, "a job in hand");
      worker.pause();
      finish();
      const jobs = () => store.sql.prepare("SELECT job_key, state, attempts, locked_by FROM jobs").all();
      await waitFor(async () => (await jobs()).length === 1, "the job in hand to be done");
      // Writes commit in order: a claim made as the job ended would have committed before this one.
      await store.write(["reclaimExpiredJobs", at]);
      expect(ran).toHaveLength(1);
      expect(await jobs()).toEqual([
        { job_key: ran[0] === "a" ? "b" : "a", state: "queued", attempts: 0, locked_by: null },
      ]);
    } finally {
      await worker.stop(0);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
