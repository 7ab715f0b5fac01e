import PQueue from "p-queue";

/** How an environment's agent may be called: its endpoint's `max_concurrency` and `rate_limit_per_minute`. */
export interface PaceSettings {
  maxConcurrency: number;
  ratePerMinute: number | null;
}

/**
 * What one call to the agent got, for the pacer to adjust to: an answer (2xx), a 429 (too many
 * requests: slow down), and how long the agent asked everyone to wait (Retry-After, on a 429 or 503).
 */
export interface CallFeedback {
  answered: boolean;
  tooManyRequests: boolean;
  retryAfterMs: number | undefined;
}

export interface AgentPacer {
  /**
   * Runs one HTTP exchange with the agent when the pace allows it, then adjusts to what it got
   * (`feedbackOf` reads the result). A call whose `signal` aborted before its turn is not sent.
   */
  call<T>(send: () => Promise<T>, feedbackOf: (result: T) => CallFeedback, signal: AbortSignal): Promise<T>;
  /** The concurrency allowed now: `maxConcurrency`, lowered after 429s and raised back after successes. */
  readonly limit: number;
  /** Calls in flight now. */
  readonly inFlight: number;
}

/**
 * The pace of one agent, shared by every run against its environment in this process: at most
 * `limit` calls at once, evenly spaced to `ratePerMinute`, and none while the agent asked to wait
 * (Retry-After). The limit follows the agent (additive increase, multiplicative decrease): a 429
 * halves it, once per round of calls — a 429 to a call sent before the last decrease says nothing
 * new — and each `limit` answers in a row raise it by one, up to `maxConcurrency`.
 */
/** The longest all calls to an agent pause for one Retry-After. */
export const MAX_SHARED_HOLD_MS = 60_000;

export function makeAgentPacer(
  { maxConcurrency, ratePerMinute }: PaceSettings,
  now: () => number = Date.now,
): AgentPacer {
  const queue = new PQueue({
    concurrency: maxConcurrency,
    ...(ratePerMinute ? { interval: Math.max(1, Math.floor(60_000 / ratePerMinute)), intervalCap: 1 } : {}),
  });
  let limit = maxConcurrency;
  let answeredInARow = 0;
  /** Counts decreases: a call remembers the one it was sent under. */
  let round = 0;
  let resumeAt = 0;
  let resumeTimer: NodeJS.Timeout | undefined;

  function setLimit(next: number): void {
    limit = next;
    queue.concurrency = next;
  }

  function holdUntil(at: number): void {
    if (at <= resumeAt) return;
    resumeAt = at;
    queue.pause();
    clearTimeout(resumeTimer);
    resumeTimer = setTimeout(
      () => {
        resumeAt = 0;
        queue.start();
      },
      Math.max(0, at - now()),
    );
    resumeTimer.unref();
  }

  function adjust(feedback: CallFeedback, sentInRound: number): void {
    // Every call to the agent pauses, but not for longer than MAX_SHARED_HOLD_MS: a caller that
    // needs to wait longer waits on its own (within its run's deadline), and others try again.
    if (feedback.retryAfterMs !== undefined) holdUntil(now() + Math.min(feedback.retryAfterMs, MAX_SHARED_HOLD_MS));
    if (feedback.answered) {
      if (++answeredInARow >= limit && limit < maxConcurrency) {
        setLimit(limit + 1);
        answeredInARow = 0;
      }
      return;
    }
    if (!feedback.tooManyRequests) return;
    answeredInARow = 0;
    if (sentInRound === round) {
      round++;
      setLimit(Math.max(1, Math.floor(limit / 2)));
    }
  }

  return {
    async call(send, feedbackOf, signal) {
      // Not p-queue's own signal: it would settle the call while its exchange is still in flight.
      // The exchange ends itself on the signal; a call still waiting for its turn ends when it comes.
      return queue.add(async () => {
        if (signal.aborted) throw signal.reason;
        const sentInRound = round;
        const result = await send();
        adjust(feedbackOf(result), sentInRound);
        return result;
      });
    },
    get limit() {
      return limit;
    },
    get inFlight() {
      return queue.pending;
    },
  };
}

/**
 * One pacer per environment for the whole process, so that every run against an agent shares its
 * pace. An environment whose pace settings changed gets a new one; calls in flight finish under the old.
 */
export function makeAgentPacers(now: () => number = Date.now) {
  const pacers = new Map<string, { settings: PaceSettings; pacer: AgentPacer }>();
  return {
    forEnvironment(environmentId: string, settings: PaceSettings): AgentPacer {
      const known = pacers.get(environmentId);
      if (
        known &&
        known.settings.maxConcurrency === settings.maxConcurrency &&
        known.settings.ratePerMinute === settings.ratePerMinute
      ) {
        return known.pacer;
      }
      const pacer = makeAgentPacer(settings, now);
      pacers.set(environmentId, { settings, pacer });
      return pacer;
    },
  };
}
export type AgentPacers = ReturnType<typeof makeAgentPacers>;
