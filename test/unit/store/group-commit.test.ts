import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { openStore, type Store } from "../../../server/store/index.js";
import { makeGroupCommit } from "../../../server/store/writer/commands.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const clock = new FakeClock();
const at = clock.now().toISOString();

/** PostgreSQL's answer to a transaction it chose to break a deadlock with, as node-postgres gives it (severity and SQLSTATE). */
const deadlock = () => Object.assign(new Error("deadlock detected"), { severity: "ERROR", code: "40P01" });

describe("a group commit meeting a deadlock or a serialization failure", () => {
  let store: Store;
  let calls: number;
  beforeEach(async () => {
    store = await openStore(":memory:", { clock });
    calls = 0;
  });
  afterEach(() => store.close());

  /** The store, its `touchApiKey` write failing as given on its first `failures` calls. */
  const storeFailing = (failures: number, error: () => Error): Store => ({
    ...store,
    writes: {
      ...store.writes,
      touchApiKey: () => (++calls <= failures ? Promise.reject(error()) : Promise.resolve()),
    },
  });
  const batch = [
    [["createProject", { project_id: "prj_a", name: "a", description: null, created_at: at }]],
    [["touchApiKey", "key_1", at]],
  ] as const;
  const projects = async () => (await store.countRows()).projects;

  it("undoes the whole batch and runs it again: every write commits, once", async () => {
    const outcomes = await makeGroupCommit(storeFailing(2, deadlock))(batch);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
    expect(calls).toBe(3);
    // Run again from the start: a project created by an earlier run would now be a duplicate.
    expect(await projects()).toBe(1);
  });

  it("fails the write alone after the third run", async () => {
    const outcomes = await makeGroupCommit(storeFailing(Infinity, deadlock))(batch);
    expect(outcomes[0]).toMatchObject({ ok: true });
    expect(outcomes[1]).toMatchObject({ ok: false, error: { code: "40P01" } });
    expect(calls).toBe(3);
    expect(await projects()).toBe(1);
  });

  it("runs a batch once when its write fails otherwise", async () => {
    const outcomes = await makeGroupCommit(storeFailing(Infinity, () => new Error("refused")))(batch);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false]);
    expect(calls).toBe(1);
  });
});
