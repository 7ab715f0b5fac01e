import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openServiceStore, type ServiceStore } from "../../../server/store/service-store.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const clock = new FakeClock();
const at = clock.now().toISOString();
const project = (name: string) =>
  ["createProject", { project_id: `prj_${name}`, name, description: null, created_at: at }] as const;

describe("the service store writing on this thread (assure test)", () => {
  let dir: string;
  let path: string;
  let store: ServiceStore;
  let reader: Database.Database;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-same-thread-"));
    path = join(dir, "assure.db");
    store = await openServiceStore(path, { clock, writer: "this-thread", lazyCommitMs: 60_000 });
    reader = new Database(path, { readonly: true });
  });
  afterEach(async () => {
    reader.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const committedNames = () => reader.prepare("SELECT name FROM projects ORDER BY rowid").pluck().all();

  it("commits the writes of one tick together, in order, each all or none, a failing one alone", async () => {
    const before = store.stats.commits;
    const outcomes = await Promise.allSettled([
      store.write(project("a")),
      store.write(project("b"), [
        "createAgent",
        { agent_id: "agt_1", project_id: "prj_missing", name: "x", version: "1", description: null, created_at: at },
      ]),
      store.write(project("c")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_FOREIGNKEY" });
    expect(store.stats.commits - before).toBe(1);
    expect(committedNames()).toEqual(["a", "c"]);
    expect((await store.getProjectByName("c"))?.project_id).toBe("prj_c");
  });

  it("holds a lazy write for the next ordinary one, commits what is queued on close, and refuses writes after", async () => {
    const lazy = store.writeLazily(project("lazy"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.stats.queued).toBe(1);
    expect(committedNames()).toEqual([]);
    await store.write(project("carrier"));
    await lazy;
    expect(committedNames()).toEqual(["lazy", "carrier"]);

    void store.writeLazily(project("at close"));
    await store.close();
    expect(committedNames()).toEqual(["lazy", "carrier", "at close"]);
    await expect(store.write(project("after"))).rejects.toThrow(/closed/);
    store = await openServiceStore(path, { clock, writer: "this-thread" });
  });

  it("keeps committing after a lazy write's timer and an ordinary write's turn meet in one turn of the event loop", async () => {
    await store.close();
    store = await openServiceStore(path, { clock, writer: "this-thread", lazyCommitMs: 1 });
    // In the check phase: an immediate set now runs in the next turn, after that turn's due timers.
    await new Promise((resolve) => setImmediate(resolve));
    const lazy = store.writeLazily(project("lazy"));
    const due = Date.now() + 5;
    while (Date.now() < due); // the lazy write's timer is due when the next turn starts
    // The timer commits both; the ordinary write's turn then finds nothing left to commit.
    await Promise.all([lazy, store.write(project("ordinary"))]);
    const turns = async (n: number) => {
      for (let turn = 0; turn < n; turn++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turns(5);
    const later = store.write(project("later"));
    await turns(5);
    expect(committedNames()).toEqual(["lazy", "ordinary", "later"]);
    await later;
  });
});
