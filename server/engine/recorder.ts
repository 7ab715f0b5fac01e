import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { NewEvent, Store } from "../store/index.js";

/**
 * Collects a run's events as they happen (stamped with their time at once) and commits them in
 * batches: an agent exchange and its tool calls land together, with any other write of that
 * moment (a status change, a conversation's row) in the same group commit.
 */
export function makeRecorder(store: Pick<Store, "appendEvents" | "writeBatched">, runId: string, clock: Clock, newId: NewId) {
  let pending: NewEvent[] = [];
  let lastWrite: Promise<unknown> = Promise.resolve();
  let failed: unknown;

  function flush<T = void>(alsoWrite?: () => T): Promise<T> {
    const events = pending;
    pending = [];
    const write = store.writeBatched(() => {
      if (events.length > 0) store.appendEvents(runId, events);
      return alsoWrite?.() as T;
    });
    lastWrite = write.catch((error: unknown) => (failed ??= error));
    return write;
  }

  return {
    record(type: string, data: Record<string, unknown>, where: { conversation_id?: string; turn?: number } = {}): void {
      pending.push({
        event_id: newId("event"),
        type,
        occurred_at: clock.now().toISOString(),
        conversation_id: where.conversation_id,
        turn: where.turn,
        data: { ...where, ...data },
      });
    },
    /** Commits what was recorded so far, then `alsoWrite` (in the same transaction); resolves when durable. */
    flush,
    /**
     * Queues what was recorded for the next group commit without waiting for it, so the commit
     * overlaps the agent's next answer. `settled()` waits for it (and reports a failure).
     */
    flushInBackground(): void {
      flush().catch(() => undefined);
    },
    /** Waits until every flush so far is durable; throws if one failed. */
    async settled(): Promise<void> {
      await lastWrite;
      if (failed !== undefined) throw failed;
    },
    /** Forget what was not flushed (the exchange it belongs to did not finish). */
    discard(): void {
      pending = [];
    },
  };
}

export type Recorder = ReturnType<typeof makeRecorder>;
