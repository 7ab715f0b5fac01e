import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { RUN_STATUSES, type RunStatus } from "../../../server/contract/index.js";
import {
  IllegalTransitionError,
  RUN_TRANSITIONS,
  assertTransition,
  isTerminal,
} from "../../../server/engine/run-states.js";
import {
  RunMovedError,
  SequenceConflictError,
  openStore,
  type LoggedEvent,
  type Store,
} from "../../../server/store/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { insertQueuedRun } from "../../helpers/store-rows.js";

const LEGAL: [RunStatus, RunStatus][] = [
  ["QUEUED", "RUNNING"],
  ["QUEUED", "FAILED"],
  ["RUNNING", "EVALUATING"],
  ["RUNNING", "FAILED"],
  ["EVALUATING", "COMPLETED"],
  ["EVALUATING", "INCONCLUSIVE"],
  ["EVALUATING", "FAILED"],
];
const ALL_PAIRS = RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => [from, to] as [RunStatus, RunStatus]));
const isLegal = (from: RunStatus, to: RunStatus) => LEGAL.some(([f, t]) => f === from && t === to);

describe("run states", () => {
  it("allows exactly the documented transitions", () => {
    expect(Object.entries(RUN_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => [from, to]))).toEqual(LEGAL);
  });

  it.each(ALL_PAIRS)("%s → %s is legal only if documented", (from, to) => {
    if (isLegal(from, to)) expect(() => assertTransition(from, to)).not.toThrow();
    else expect(() => assertTransition(from, to)).toThrow(IllegalTransitionError);
  });

  it("has terminal states that never change", () => {
    expect(RUN_STATUSES.filter(isTerminal)).toEqual(["COMPLETED", "INCONCLUSIVE", "FAILED"]);
  });
});

describe("store.transitionRun", () => {
  const clock = new FakeClock();
  const now = clock.now().toISOString();
  let store: Store;
  // Each test starts from its own queued run: none depends on what another did.
  beforeEach(async () => {
    store = await openStore(":memory:", { clock });
    await insertQueuedRun(store, now);
  });
  afterEach(() => store.close());

  const move = (from: RunStatus, to: RunStatus) =>
    store.transitionRun({
      run_id: "run_1",
      from,
      to,
      terminal: isTerminal(to),
      verdict: "PENDING",
      failure: null,
      now,
    });
  const event = (sequence: number): LoggedEvent => ({
    sequence,
    event_id: `evt_${sequence}`,
    type: "run.resumed",
    occurred_at: now,
    conversation_id: null,
    turn: null,
    data: { attempt: 1, interrupted_conversations: 0, reason: null },
  });

  it("moves a run only from the status it is in", async () => {
    await expect(move("RUNNING", "EVALUATING")).rejects.toThrow(RunMovedError); // it is QUEUED
    expect(await move("QUEUED", "RUNNING")).toMatchObject({ run_id: "run_1", status: "RUNNING", started_at: now });
    await expect(move("QUEUED", "RUNNING")).rejects.toThrow(RunMovedError); // a second worker loses
    expect(await store.getRun("run_1")).toMatchObject({ status: "RUNNING", started_at: now });
  });

  it("undoes what was written with a move that is refused", async () => {
    const refused = () =>
      store.transaction(async () => {
        await store.insertGateResults([
          {
            run_id: "run_1",
            position: 0,
            gate_id: "DET",
            title: null,
            status: "passed",
            reason: "x",
            evidence_refs: [],
          },
        ]);
        return move("RUNNING", "EVALUATING"); // the run is QUEUED
      });
    await expect(refused()).rejects.toThrow(RunMovedError);
    expect(await store.listGateResults("run_1")).toEqual([]);
    expect((await store.getRun("run_1"))?.status).toBe("QUEUED");
  });

  it("appends to a run's log only where it ends, so it stays gap-free", async () => {
    await store.appendEvents("run_1", [event(1), event(2)]);
    await expect(store.appendEvents("run_1", [event(4)])).rejects.toThrow(SequenceConflictError); // would leave a gap
    await expect(store.appendEvents("run_1", [event(2)])).rejects.toThrow(SequenceConflictError); // a second writer
    await expect(store.appendEvents("run_1", [event(3), event(5)])).rejects.toThrow(SequenceConflictError);
    await store.appendEvents("run_1", [event(3)]);
    expect((await store.listEvents("run_1", 0, 10)).map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(await store.getLastSequence("run_1")).toBe(3);
  });
});
