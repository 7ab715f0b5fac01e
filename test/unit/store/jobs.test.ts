import { describe, expect, it } from "@jest/globals";
import { openStore } from "../../../server/store/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";

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
});
