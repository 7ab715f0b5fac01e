import { setMaxListeners } from "node:events";
import { RunFailedError } from "../errors.js";
import { makeAgentPacers, type AgentPacer } from "../net/agent-pacer.js";
import type { EnvironmentTarget } from "../store/index.js";
import { makeFairSlots } from "./fair-slots.js";

export interface ConversationLanesOptions {
  /** Conversations held at once across every run of this process (ASSURE_MAX_CONVERSATIONS), and by one project's runs. */
  maxConversations?: number | undefined;
  maxConversationsPerProject?: number | undefined;
  /** The service's clock, in epoch ms. */
  now: () => number;
}

/** One lane of a run: it holds conversations one after another. */
export interface Lane {
  /** Aborted when the job stops or another lane of the run failed. */
  signal: AbortSignal;
  /**
   * Runs `work` in one of the process's conversation slots, once one is free for the run's
   * project; undefined, without running it, when the run stopped or may start no more conversations
   * meanwhile (the lane may have waited long for the slot). Throws `timeout` once the run's deadline passed.
   */
  inSlot<T>(work: () => Promise<T>): Promise<T | undefined>;
}

export interface RunLanesOptions {
  projectId: string;
  /** Lanes at once: the spec's concurrency. */
  concurrency: number;
  /** The job's: when it aborts, every lane stops and its reason is thrown. */
  signal: AbortSignal;
  /** When the run must have held its conversations (epoch ms), `timeoutMs` after it started. */
  deadline: number;
  timeoutMs: number;
  /** Whether a conversation may still start (the run's budget). */
  mayStart: () => boolean;
  /** What each lane does. */
  lane: (lane: Lane) => Promise<void>;
}

/**
 * Where conversations are held, for every run of this process: its conversation slots (shared
 * fairly among projects) and each environment's pace (shared by every run against its agent).
 */
export function makeConversationLanes({
  maxConversations = 64,
  maxConversationsPerProject,
  now,
}: ConversationLanesOptions) {
  const slots = makeFairSlots({ total: maxConversations, perKey: maxConversationsPerProject });
  const pacers = makeAgentPacers(now);

  return {
    /** The pace every call to an environment's agent keeps. */
    pacerOf(environment: EnvironmentTarget): AgentPacer {
      return pacers.forEnvironment(environment.environment_id, {
        maxConcurrency: environment.max_concurrency,
        ratePerMinute: environment.rate_limit_per_minute,
      });
    },
    /**
     * Runs a run's lanes at once until each is done. The first lane that fails stops the others
     * (their signal aborts) and its error is thrown once they all stopped; the job's stop is
     * thrown before it.
     */
    async run({ projectId, concurrency, signal: jobSignal, deadline, timeoutMs, mayStart, lane }: RunLanesOptions) {
      const stop = new AbortController();
      const signal = AbortSignal.any([jobSignal, stop.signal]);
      // Each lane may wait on it in a few places at once (a conversation slot, the pace, a retry's backoff).
      setMaxListeners(4 * concurrency + 16, signal);
      // Not p-queue's signal: it would settle while the conversation still runs.
      const inSlot = <T>(work: () => Promise<T>): Promise<T | undefined> =>
        slots.run(projectId, async () => {
          if (signal.aborted || !mayStart()) return undefined;
          if (now() > deadline) {
            throw new RunFailedError(
              "timeout",
              `The run's deadline passed (${timeoutMs} ms after it started) before every conversation was held`,
            );
          }
          return work();
        });
      let failure: { error: unknown } | undefined;
      await Promise.all(
        Array.from({ length: concurrency }, () =>
          lane({ signal, inSlot }).catch((error: unknown) => {
            if (failure || signal.aborted) return; // cut off by the first failure, or by the worker stopping
            failure = { error };
            stop.abort(new Error("another conversation of the run failed"));
          }),
        ),
      );
      if (jobSignal.aborted) throw jobSignal.reason;
      if (failure) throw failure.error;
    },
  };
}

export type ConversationLanes = ReturnType<typeof makeConversationLanes>;
