import type { Clock } from "../clock.js";
import type { RunEventData, RunEventType } from "../contract/index.js";
import type { NewId } from "../ids.js";
import type { JobClaim, LoggedEvent } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";
import type { WriteCommand, WriteResults } from "../store/writer/commands.js";

export interface RecorderOptions {
  store: Pick<ServiceStore, "write" | "writeLazily" | "getLastSequence">;
  runId: string;
  clock: Clock;
  newId: NewId;
  /**
   * The job claim the run is worked on under: every write is refused (ClaimLostError) once it is no
   * longer held, so a worker whose lease lapsed cannot write over the run's new holder.
   */
  claim?: JobClaim | undefined;
}

/**
 * Keeps a run's event log while the engine works on it. Each event gets its place in the log
 * (sequence) and its time when it happens, so evaluators can cite it before it is written; the
 * store refuses an append that does not continue the log, so it stays gap-free.
 *
 * Events are written in batches: an agent exchange and its tool calls land together, with any
 * other write of that moment (a status change, a conversation's row) in the same write. Writes
 * commit in the order they were made, so awaiting one flush means every earlier write is durable
 * too; a background write that failed is reported by the next awaited flush.
 */
export async function makeRecorder({ store, runId, clock, newId, claim }: RecorderOptions) {
  let lastSequence = await store.getLastSequence(runId);
  let pending: LoggedEvent[] = [];
  let failed: unknown;

  function queue(commands: readonly WriteCommand[], lazily: boolean): Promise<unknown[]> {
    const events = pending;
    pending = [];
    const all: WriteCommand[] = [
      ...(claim ? [["assertJobClaim", claim] as const] : []),
      ...(events.length > 0 ? [["appendEvents", runId, events] as const] : []),
      ...commands,
    ];
    const write = lazily ? store.writeLazily(...all) : store.write(...all);
    write.catch((error: unknown) => (failed ??= error));
    return write;
  }

  return {
    /** Records an event now; the conversation and turn it belongs to are read from its data. */
    record<T extends RunEventType>(type: T, data: RunEventData<T>): void {
      const where = data as { conversation_id?: string; turn?: number };
      const event = {
        sequence: ++lastSequence,
        event_id: newId("event"),
        type,
        occurred_at: clock.now().toISOString(),
        conversation_id: where.conversation_id ?? null,
        turn: where.turn ?? null,
        data,
      } as LoggedEvent;
      pending.push(event);
    },
    /**
     * Writes what was recorded so far, then `commands`, together; resolves with the commands'
     * results when durable, with everything written before. Throws if this or an earlier write failed.
     */
    async flush<const C extends readonly WriteCommand[]>(...commands: C): Promise<WriteResults<C>> {
      let values: unknown[];
      try {
        values = await queue(commands, false);
      } catch (error) {
        throw failed ?? error; // the first failure is the cause; later ones follow from it
      }
      if (failed !== undefined) throw failed;
      return values.slice(values.length - commands.length) as WriteResults<C>;
    },
    /**
     * Throws the first write that failed, if one did. Once one has, none of what follows can be
     * written (the log no longer continues where it ends), so work should stop at once.
     */
    throwIfFailed(): void {
      if (failed !== undefined) throw failed;
    },
    /**
     * Queues what was recorded (and `commands`) without waiting for it: it commits with the next
     * write anyone awaits (or within a few ms), so it costs no commit of its own. The next `flush`
     * waits for it.
     */
    flushInBackground(...commands: readonly WriteCommand[]): void {
      queue(commands, true).catch(() => undefined);
    },
    /**
     * Waits until every write made so far has settled. If one failed, forgets what was not
     * written and continues the log from where the store says it ends.
     */
    async settle(): Promise<void> {
      await store.write().catch(() => undefined); // commits after every earlier write
      if (failed === undefined) return;
      failed = undefined;
      pending = [];
      lastSequence = await store.getLastSequence(runId);
    },
  };
}

export type Recorder = Awaited<ReturnType<typeof makeRecorder>>;
