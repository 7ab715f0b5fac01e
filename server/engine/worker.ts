import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.js";
import { coerceError } from "../errors.js";
import type { Logger } from "../log.js";
import type { ClaimedJob } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";

export interface TaskContext {
  job: ClaimedJob;
  /** Aborted when the worker stops or loses the job's lease: stop at the next safe point. */
  signal: AbortSignal;
}

export type Task = (payload: unknown, context: TaskContext) => Promise<void>;
export type TaskList = Record<string, Task>;

export interface WorkerOptions {
  store: Pick<ServiceStore, "write" | "writeLazily">;
  clock: Clock;
  log: Logger;
  tasks: TaskList;
  concurrency?: number;
  /** Jobs of one key (a project's runs) running at once, across every worker: the rest wait, and other keys get the slots. */
  perKeyCap?: number;
  leaseMs?: number;
  pollIntervalMs?: number;
}

export interface Worker {
  start(): void;
  /** Wakes the worker now instead of at its next poll (after an enqueue). */
  nudge(): void;
  /** Stops claiming (the service is about to stop); the jobs in hand go on until stop(). */
  pause(): void;
  /** Stops claiming, asks running tasks to stop, waits up to `graceMs`, and puts back what is unfinished. */
  stop(graceMs?: number): Promise<void>;
  readonly running: number;
  /** Whether it claims work (started, not stopped). */
  readonly started: boolean;
}

const backoffMs = (attempt: number) => Math.min(60_000, 1000 * 2 ** (attempt - 1));

/**
 * Claims jobs from the durable queue and runs them, at most `concurrency` at once, renewing
 * each lease while its task works. Every claimed job is released: completed, put back with
 * backoff, or put back at once on stop. Expired leases (a crashed worker) are reclaimed on a timer.
 */
export function makeWorker({
  store,
  clock,
  log,
  tasks,
  concurrency = 4,
  perKeyCap = Number.POSITIVE_INFINITY,
  leaseMs = 30_000,
  pollIntervalMs = 500,
}: WorkerOptions): Worker {
  const workerId = `worker-${randomUUID().slice(0, 8)}`;
  // Keyed by the claim, not the job's id: a job whose lease lapsed can be claimed again meanwhile.
  const inFlight = new Map<ClaimedJob, { controller: AbortController; done: Promise<void> }>();
  let stopped = true;
  let paused = false;
  let timer: NodeJS.Timeout | undefined;
  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs).toISOString();

  /** Puts a job back to run at once, refunding the attempt: handing work back on stop is not a failure. */
  async function handBack(job: ClaimedJob): Promise<void> {
    await store.write(["releaseJob", job, at(), "released on shutdown", true]);
  }

  async function execute(job: ClaimedJob, controller: AbortController): Promise<void> {
    const started = performance.now();
    const heartbeat = setInterval(
      () => {
        store.write(["renewJobLease", job, at(leaseMs)]).then(
          ([renewed]) => {
            if (renewed || controller.signal.aborted) return;
            log.warn({ job_id: job.job_id }, `Lost the lease of job ${job.job_id}; abandoning it`);
            controller.abort(new Error("lease lost"));
          },
          (raw: unknown) => {
            log.error(
              { err: coerceError(raw), job_id: job.job_id },
              `Could not renew the lease of job ${job.job_id}; trying again`,
            );
          },
        );
      },
      Math.max(10, Math.floor(leaseMs / 3)),
    );
    try {
      const task = tasks[job.task];
      if (!task) throw new Error(`No task named '${job.task}'`);
      await task(job.payload, { job, signal: controller.signal });
      if (controller.signal.aborted && stopped) {
        await handBack(job);
      } else {
        // The job's deletion need not commit on its own: if it were lost, the job would come back
        // once its lease lapsed, and tasks are safe to run again (a lease can lapse mid-task
        // anyway; a run already terminal ends at once). It rides with the next commit, often the
        // claim of the next job.
        store.writeLazily(["completeJob", job]).catch((raw: unknown) => {
          log.error(
            { err: coerceError(raw), job_id: job.job_id },
            `Could not delete finished job ${job.job_id}; its lease will lapse`,
          );
        });
      }
      log.debug(`Completed job ${job.job_id} (${job.task}, ${Math.round(performance.now() - started)}ms)`);
    } catch (raw) {
      const error = coerceError(raw);
      if (stopped) {
        await handBack(job);
      } else {
        // A task settles its own work (a run ends terminal even on its last attempt); a job is never
        // dropped on an error, or the work it stands for could be left unfinished for good.
        await store.write(["releaseJob", job, at(backoffMs(job.attempts)), error.message]);
        log.warn(
          { err: error, job_id: job.job_id },
          `Job ${job.job_id} (${job.task}) failed (attempt ${job.attempts}); will retry`,
        );
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  function start(job: ClaimedJob): void {
    const controller = new AbortController();
    const done = execute(job, controller)
      .catch((raw: unknown) => {
        // Releasing failed too (the database is failing): the lease lapses and the job comes back.
        log.error(
          { err: coerceError(raw), job_id: job.job_id },
          `Could not release job ${job.job_id}; its lease will lapse`,
        );
      })
      .finally(() => {
        inFlight.delete(job);
        scheduleFill();
      });
    inFlight.set(job, { controller, done });
  }

  /**
   * Claims as many jobs as there are free slots, in one write of the group commit (so a claim
   * shares its commit with the writes of the jobs running), and starts them. One claim at a time:
   * a wish to fill while one is in flight is kept for when it lands.
   */
  let claiming: Promise<void> | undefined;
  let fillAgain = false;
  function fill(): void {
    if (stopped || paused) return;
    if (claiming) {
      fillAgain = true;
      return;
    }
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    claiming = store
      .write(["claimJobs", workerId, at(), at(leaseMs), free, perKeyCap])
      .then(
        async ([claimed]) => {
          // Stopped (or paused) while the claim was committing: the jobs go back at once, without using an attempt.
          if (stopped || paused) await Promise.all(claimed.map((job) => handBack(job)));
          else for (const job of claimed) start(job);
        },
        (raw: unknown) => {
          // Claiming can fail for a moment (another process holding the write lock past busy_timeout);
          // the next tick tries again rather than leaving queued runs stranded.
          log.error({ err: coerceError(raw) }, "The worker could not claim a job; retrying at the next tick");
        },
      )
      .catch((raw: unknown) => {
        log.error(
          { err: coerceError(raw) },
          "Could not hand back jobs claimed while stopping; their leases will lapse",
        );
      })
      .finally(() => {
        claiming = undefined;
        if (fillAgain) {
          fillAgain = false;
          fill();
        }
      });
  }

  // Jobs finishing in the same turn of the event loop free their slots together: claim once for all.
  let fillScheduled = false;
  function scheduleFill(): void {
    if (fillScheduled) return;
    fillScheduled = true;
    setImmediate(() => {
      fillScheduled = false;
      fill();
    });
  }

  function tick(): void {
    if (stopped || paused) return;
    // Queued before the claim, so a job whose lease lapsed can be claimed in the same commit.
    store.write(["reclaimExpiredJobs", at()]).catch((raw: unknown) => {
      log.error({ err: coerceError(raw) }, "Could not reclaim expired jobs; trying again at the next tick");
    });
    fill();
    timer = setTimeout(tick, pollIntervalMs);
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    nudge() {
      fill();
    },
    pause() {
      paused = true;
      clearTimeout(timer);
    },
    async stop(graceMs = 10_000) {
      stopped = true;
      clearTimeout(timer);
      await claiming;
      const all = [...inFlight.values()];
      const graceful = Promise.all(all.map((entry) => entry.done));
      const deadline = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
      if ((await Promise.race([graceful.then(() => "done"), deadline])) !== "done") {
        for (const entry of all) entry.controller.abort(new Error("worker stopping"));
        await graceful;
      }
    },
    get running() {
      return inFlight.size;
    },
    get started() {
      return !stopped;
    },
  };
}
