import type { LiveTraces } from "../traces/live-traces.js";
import { z } from "zod";
import { LRUCache } from "lru-cache";
import type { Clock } from "../../clock.js";
import type { Run, TestSpecDocument } from "../../contract/index.js";
import { FAILURE_CAUSES, RunFailedError, coerceError } from "../../errors.js";
import type { Evaluator } from "../../evaluate/evaluator.js";
import type { Judge } from "../../evaluate/judges/llm-judge.js";
import type { NewId } from "../../ids.js";
import type { Logger } from "../../log.js";
import type { EgressPolicy } from "../../net/egress.js";
import { isClaimLost } from "../../store/index.js";
import type { ServiceStore } from "../../store/service-store.js";
import { makeConversationLanes } from "../conversation-lanes.js";
import { converse } from "../converse.js";
import { defineTask } from "../define-task.js";
import { judgeRun } from "../judge-run.js";
import type { McpConversations } from "../mcp-conversations.js";
import { makeRecorder } from "../recorder.js";
import { isTerminal } from "../run-states.js";
import { transitionRun } from "../transition-run.js";
import type { Task, TaskContext } from "../worker.js";

export const EXECUTE_RUN = "execute_run";
export const EXECUTE_RUN_MAX_ATTEMPTS = 5;

export interface ExecuteRunDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  egress: EgressPolicy;
  log: Logger;
  /** The LLM judge for spec metrics, if one is configured. */
  judge?: Judge | undefined;
  /** The evaluator families every run gets; all of EVALUATORS unless given. */
  evaluators?: readonly Evaluator[] | undefined;
  /** Tests shorten the agent's retry backoff; production keeps the default. */
  agentBackoffMs?: (attempt: number) => number;
  /** The conversations whose agents' OTLP spans are being attached. */
  liveTraces?: LiveTraces | undefined;
  /** Conversations held at once across every run of this process (ASSURE_MAX_CONVERSATIONS), and by one project's runs. */
  maxConversations?: number | undefined;
  maxConversationsPerProject?: number | undefined;
  /** Serves the spec's tools over MCP to agents that run their own (each conversation at a URL of its own). */
  mcp?: McpConversations | undefined;
}

/** The job that executes a run end to end, as its project's work. Safe to run again: it picks up where a crash left it. */
export function executeRunJob(runId: string, projectId: string, now: string) {
  return {
    task: EXECUTE_RUN,
    job_key: `${EXECUTE_RUN}:${runId}`,
    payload: { run_id: runId },
    run_at: now,
    max_attempts: EXECUTE_RUN_MAX_ATTEMPTS,
    fair_key: projectId,
  };
}

/**
 * Executes a run from where it is: QUEUED → RUNNING (its conversations held) → EVALUATING (judged)
 * → its end. A run that cannot go on is FAILED with its cause; an unexpected error is retried by
 * the worker first, and a job that keeps being interrupted gives up.
 */
export function makeExecuteRun(deps: ExecuteRunDeps): Task {
  const { store, clock, log } = deps;
  const now = () => clock.now().toISOString();
  const lanes = makeConversationLanes({
    maxConversations: deps.maxConversations,
    maxConversationsPerProject: deps.maxConversationsPerProject,
    now: () => clock.now().getTime(),
  });

  // Spec versions are immutable (content-addressed), so a document read once serves every run of it.
  const specs = new LRUCache<string, TestSpecDocument>({ max: 100 });
  async function specOf(run: Run): Promise<TestSpecDocument> {
    const key = `${run.test_spec_id} ${run.spec_version}`;
    let spec = specs.get(key);
    if (!spec) {
      spec = await store.getSpecDocument(run.test_spec_id, run.spec_version);
      if (!spec) throw new RunFailedError("internal_error", `Spec version ${run.spec_version} no longer exists`);
      specs.set(key, spec);
    }
    return spec;
  }

  async function executeRun(run_id: string, { job, signal }: TaskContext): Promise<void> {
    let run = await store.getRun(run_id);
    if (!run || isTerminal(run.status)) return;
    // Every write of the run is fenced by the job's claim: once it is lost, none of them lands.
    const recorder = await makeRecorder({ store, runId: run_id, clock, newId: deps.newId, claim: job });
    const moves = { recorder, clock, log };
    try {
      // A run still QUEUED has held no conversation yet: nothing can have been cut off.
      const interrupted =
        run.status === "QUEUED" ? 0 : (await store.write(["interruptRunningConversations", run_id, now()]))[0];
      if (job.attempts > 1 || interrupted > 0) {
        recorder.record("run.resumed", {
          attempt: job.attempts,
          interrupted_conversations: interrupted,
          reason: job.last_error,
        });
      }
      if (job.attempts > job.max_attempts) {
        throw new RunFailedError("internal_error", `The run was interrupted ${job.attempts - 1} times; giving up`);
      }
      const spec = await specOf(run);
      const earlier = run.status === "QUEUED" ? [] : await store.listRunConversations(run_id);
      const completed = earlier.filter((c) => c.status === "completed");
      if (run.status === "QUEUED") run = await transitionRun(moves, run, "RUNNING");
      if (run.status === "RUNNING") {
        completed.push(...(await converse({ ...deps, lanes }, { run, spec, recorder, signal, earlier })));
        run = await transitionRun(moves, run, "EVALUATING");
      }
      await judgeRun(deps, { run, spec, recorder, signal, completed });
    } catch (raw) {
      if (signal.aborted) return; // stopped or lost the lease: the job goes back to the queue and resumes later
      if (isClaimLost(raw)) throw raw; // not a failure of the run: its new holder goes on with it
      const error = raw instanceof RunFailedError ? raw : undefined;
      if (!error && job.attempts < job.max_attempts) throw raw; // retried with backoff by the worker
      const failure = error
        ? { cause: error.failureCause, message: error.message }
        : { cause: "internal_error" as const, message: `Unexpected error: ${coerceError(raw).message}` };
      if (!error) log.error({ err: coerceError(raw), run_id }, `Run ${run_id} failed on an internal error`);
      await recorder.settle();
      const current = (await store.getRun(run_id))!;
      if (!isTerminal(current.status)) {
        await transitionRun(moves, current, "FAILED", { verdict: FAILURE_CAUSES[failure.cause].verdict, failure });
      }
    }
  }

  return defineTask(z.object({ run_id: z.string() }), async ({ run_id }, context) => {
    try {
      await executeRun(run_id, context);
    } catch (raw) {
      if (!isClaimLost(raw)) throw raw;
      // The lease lapsed while this worker still worked and the job went back to the queue: what it
      // wrote since was refused, and the run is the new holder's. Neither the run nor the attempt failed.
      log.warn(
        { run_id, job_id: context.job.job_id },
        `Lost the claim of run ${run_id}'s job; leaving the run to its new holder`,
      );
    }
  });
}
