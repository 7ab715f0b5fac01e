import { describe, expect, it } from "@jest/globals";
import { openStore, type LoggedEvent } from "../../../server/store/index.js";
import { makeSameThreadWriter } from "../../../server/store/writer/same-thread-writer.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { insertQueuedRun } from "../../helpers/store-rows.js";

describe("the job queue", () => {
  it("lets only the latest claim of a job renew, complete or release it", async () => {
    const clock = new FakeClock();
    const store = await openStore(":memory:", { clock });
    try {
      const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
      await store.enqueueJob({ task: "probe", job_key: "a", payload: {}, run_at: at(0), max_attempts: 3 });
      const [first] = await store.claimJobs("worker-1", at(0), at(1000), 1);
      expect(first).toMatchObject({ attempts: 1, locked_by: "worker-1", state: "running" });

      clock.advance(2000); // the lease lapses while worker-1 still works on it...
      expect(await store.reclaimExpiredJobs(at(0))).toBe(1);
      const [second] = await store.claimJobs("worker-1", at(0), at(1000), 1); // ...and the same worker claims it again
      expect(second).toMatchObject({ job_id: first!.job_id, attempts: 2, locked_by: "worker-1" });

      // The first claim is stale: it can no longer touch the job, even though the worker is the same.
      expect(await store.renewJobLease(first!, at(5000))).toBe(false);
      expect(await store.releaseJob(first!, at(0), "stale", true)).toBe(false);
      expect(await store.completeJob(first!)).toBe(false);
      expect(await store.renewJobLease(second!, at(5000))).toBe(true);
      expect(await store.completeJob(second!)).toBe(true);
      expect((await store.countRows()).jobs).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("refuses a whole write fenced by a claim that was lost, and takes the new claim's", async () => {
    const clock = new FakeClock();
    const store = await openStore(":memory:", { clock });
    const writer = makeSameThreadWriter(store);
    try {
      const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
      await insertQueuedRun(store, at(0));
      const event = (sequence: number): LoggedEvent => ({
        sequence,
        event_id: `evt_${sequence}`,
        type: "run.resumed",
        occurred_at: at(0),
        conversation_id: null,
        turn: null,
        data: { attempt: 1, interrupted_conversations: 0, reason: null },
      });
      const [first] = await store.claimJobs("worker-1", at(0), at(1000), 1);
      await writer.write(["assertJobClaim", first!], ["appendEvents", "run_1", [event(1)]]);

      clock.advance(2000); // the lease lapses while worker-1 still works on it: the job goes back to the queue
      expect(await store.reclaimExpiredJobs(at(0))).toBe(1);
      await expect(
        writer.write(["assertJobClaim", first!], ["appendEvents", "run_1", [event(2)]]),
      ).rejects.toMatchObject({ name: "ClaimLostError" });
      const [second] = await store.claimJobs("worker-2", at(0), at(1000), 1);
      await expect(
        writer.write(["assertJobClaim", first!], ["appendEvents", "run_1", [event(2)]]),
      ).rejects.toMatchObject({ name: "ClaimLostError" });
      expect(await store.getLastSequence("run_1")).toBe(1); // nothing of the refused writes landed

      await writer.write(["assertJobClaim", second!], ["appendEvents", "run_1", [event(2)]]);
      expect(await store.getLastSequence("run_1")).toBe(2);
    } finally {
      await writer.close();
      await store.close();
    }
  });
});
