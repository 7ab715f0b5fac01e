import { makeKeyLocks } from "./sql/key-locks.js";
import type { Sql } from "./sql/sql.js";

export interface JobRow {
  job_id: number;
  task: string;
  /** Unique per intended piece of work (e.g. `execute_run:<run_id>`): enqueueing twice is a no-op. */
  job_key: string;
  /** What the task is given (stored as JSON). */
  payload: unknown;
  state: "queued" | "running";
  run_at: string;
  attempts: number;
  max_attempts: number;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  /** Whose work it is (a run's project): claims are shared fairly among keys; null for the service's own upkeep. */
  fair_key: string | null;
}

/**
 * One claim of a job, as the worker that made it holds it. A claim counts as an attempt, so the
 * attempt number tells claims apart: a worker still holding an earlier claim (its lease lapsed and
 * the job was claimed again, perhaps by the same worker) can no longer renew, complete or release it.
 */
export type JobClaim = Pick<JobRow, "job_id" | "attempts"> & { locked_by: string };

/** A job as its claim returned it: running, under the claiming worker's lease. */
export type ClaimedJob = JobRow & JobClaim;

export interface NewJob {
  task: string;
  job_key: string;
  payload: unknown;
  run_at: string;
  max_attempts: number;
  /** Whose work it is, for fair claims (a run's project). */
  fair_key?: string | null | undefined;
}

/**
 * A write made for a claim that is no longer held: its lease lapsed and the job went back to the
 * queue (another worker may hold it now). Nothing of the write was kept; the work is the new holder's.
 */
export class ClaimLostError extends Error {
  override name = "ClaimLostError";
}

/** Whether `error` is a ClaimLostError, also as it comes back from the writer thread (its name kept, its class lost). */
export const isClaimLost = (error: unknown): boolean => error instanceof Error && error.name === "ClaimLostError";

const claimOf = ({ job_id, locked_by, attempts }: JobClaim) => ({ job_id, locked_by, attempts });

/**
 * A durable job queue in SQLite. Workers claim jobs under a lease that they renew while they
 * work; a job whose lease runs out (its worker died) goes back to the queue. A finished job is
 * deleted: the state of the work lives in the records it produced (runs, events).
 */
export function makeJobsStore(db: Sql) {
  const locks = makeKeyLocks(db);
  const insert =
    db.prepare(`INSERT INTO jobs (task, job_key, payload, state, run_at, max_attempts, created_at, fair_key)
    VALUES (@task, @job_key, @payload, 'queued', @run_at, @max_attempts, @run_at, @fair_key)
    ON CONFLICT (job_key) DO NOTHING`);
  // Whose work is due, with how many of their jobs run now (the service's own upkeep is one more key).
  const dueKeys = db.prepare(`SELECT q.fair_key, MIN(q.run_at) AS first_due,
      (SELECT COUNT(*) FROM jobs r WHERE r.state = 'running' AND r.fair_key IS NOT DISTINCT FROM q.fair_key) AS running
    FROM jobs q WHERE q.state = 'queued' AND q.run_at <= @now GROUP BY q.fair_key`);
  const claim =
    db.prepare(`UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = @worker, locked_until = @until
    WHERE job_id = (SELECT job_id FROM jobs WHERE state = 'queued' AND run_at <= @now AND fair_key IS NOT DISTINCT FROM @key ORDER BY run_at, job_id LIMIT 1 ${db.dialect.skipLocked})
    RETURNING *`);
  const runningOf = db
    .prepare("SELECT COUNT(*) FROM jobs WHERE state = 'running' AND fair_key IS NOT DISTINCT FROM ?")
    .pluck();
  const held = "job_id = @job_id AND locked_by = @locked_by AND attempts = @attempts AND state = 'running'";
  // Locked until the write commits: a claim or reclaim of the job waits for it, and it for them.
  const holding = db.prepare(`SELECT job_id FROM jobs WHERE ${held} ${db.dialect.lockShared}`).pluck();
  const renew = db.prepare(`UPDATE jobs SET locked_until = @until WHERE ${held}`);
  const remove = db.prepare(`DELETE FROM jobs WHERE ${held}`);
  const release = db.prepare(`UPDATE jobs SET state = 'queued', locked_by = NULL, locked_until = NULL, run_at = @run_at,
      last_error = @error, attempts = attempts - @refund
    WHERE ${held}`);
  const reclaim = db.prepare(`UPDATE jobs SET state = 'queued', locked_by = NULL, locked_until = NULL,
      last_error = 'lease expired: the worker stopped without finishing'
    WHERE state = 'running' AND locked_until <= ?`);

  return {
    reads: {},
    writes: {
      async enqueueJob(job: NewJob): Promise<void> {
        await insert.run({ ...job, payload: JSON.stringify(job.payload), fair_key: job.fair_key ?? null });
      },
      /**
       * Claims up to `max` jobs that are due, under a lease until `until`, shared fairly: each claim
       * goes to the key (a project) with the fewest jobs running, oldest first among equals, and a key
       * with `perKeyCap` jobs running waits — however many of its jobs are queued, others get their turn.
       */
      async claimJobs(
        worker: string,
        now: string,
        until: string,
        max: number,
        perKeyCap = Number.POSITIVE_INFINITY,
      ): Promise<ClaimedJob[]> {
        const capped = Number.isFinite(perKeyCap);
        /**
         * Whether a job of `key` may be claimed now. Under a cap, claims of one key take turns across
         * nodes: the key's lock is held until this claim commits, and its running jobs are counted
         * under it (counted before, another node's claim could slip in between). A key another node
         * is claiming right now is left to it: waiting could deadlock with it on a second key.
         */
        const mayClaim = async (key: string | null): Promise<boolean> =>
          !capped ||
          key === null ||
          ((await locks.tryLock("fair key", key)) && (await runningOf.get<number>(key))! < perKeyCap);
        return db.transaction(async () => {
          const jobs: ClaimedJob[] = [];
          const passed = new Set<string | null>();
          while (jobs.length < max) {
            const keys = (await dueKeys.all<{ fair_key: string | null; first_due: string; running: number }>({ now }))
              .filter((due) => !passed.has(due.fair_key) && (due.fair_key === null || due.running < perKeyCap))
              .sort(
                (a, b) => a.running - b.running || (a.first_due < b.first_due ? -1 : a.first_due > b.first_due ? 1 : 0),
              );
            if (keys.length === 0) break;
            const key = keys[0]!.fair_key;
            if (!(await mayClaim(key))) {
              passed.add(key);
              continue;
            }
            const job = await claim.get<ClaimedJob & { payload: string }>({ worker, now, until, key });
            // Another node took the key's last due job meanwhile: try the next key.
            if (!job) {
              passed.add(key);
              continue;
            }
            jobs.push({ ...job, payload: JSON.parse(job.payload) as unknown });
          }
          return jobs;
        });
      },
      /** False when the claim was lost (its lease lapsed and the job went back): the worker must stop working on it. */
      async renewJobLease(claim: JobClaim, until: string): Promise<boolean> {
        return (await renew.run({ ...claimOf(claim), until })).changes === 1;
      },
      /**
       * Fences a write of the claim's work: in the same write (all or none), it refuses the whole
       * write with ClaimLostError once the claim is gone, so a worker whose lease lapsed while it
       * still worked cannot make progress over the new holder's.
       */
      async assertJobClaim(claim: JobClaim): Promise<void> {
        if ((await holding.get(claimOf(claim))) === undefined) {
          throw new ClaimLostError(
            `Job ${claim.job_id} is no longer held by ${claim.locked_by} (attempt ${claim.attempts}): its lease lapsed`,
          );
        }
      },
      async completeJob(claim: JobClaim): Promise<boolean> {
        return (await remove.run(claimOf(claim))).changes === 1;
      },
      /**
       * Puts the job back, to run again at `runAt` (backoff, or at once after a graceful stop). A
       * graceful stop refunds the attempt: handing work back on shutdown is not a failure.
       */
      async releaseJob(claim: JobClaim, runAt: string, error: string | null, refundAttempt = false): Promise<boolean> {
        return (
          (await release.run({ ...claimOf(claim), run_at: runAt, error, refund: refundAttempt ? 1 : 0 })).changes === 1
        );
      },
      /** Returns jobs whose lease expired to the queue; returns how many. */
      async reclaimExpiredJobs(now: string): Promise<number> {
        return (await reclaim.run(now)).changes;
      },
    },
  };
}

export type JobsStore = ReturnType<typeof makeJobsStore>;
