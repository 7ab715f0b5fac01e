import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { NewEvent, Store } from "../store/index.js";

/**
 * Collects a run's events as they happen (stamped with their time at once) and commits them in
 * batches: an agent exchange and its tool calls land together, with any other write of that
 * moment (a status change, a conversation's row) in the same group commit.
 *
 * Writes commit in the order they were queued, so awaiting one flush means every earlier write
 * is durable too; a background write that failed is reported by the next awaited flush.
 */
export function makeRecorder(
  store: Pick<Store, "appendEvents" | "writeBatched" | "writeBatchedLazily">,
  runId: string,
  clock: Clock,
  newId: NewId,
) {
  let pending: NewEvent[] = [];
  let failed: unknown;

  function queue<T>(alsoWrite: (() => T) | undefined, lazily: boolean): Promise<T> {
    const events = pending;
    pending = [];
    const write = (lazily ? store.writeBatchedLazily : store.writeBatched)(() => {
      if (events.length > 0) store.appendEvents(runId, events);
      return alsoWrite?.() as T;
    });
    write.catch((error: unknown) => (failed ??= error));
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
    /**
     * Commits what was recorded so far, then `alsoWrite` (in the same transaction); resolves when
     * durable, with everything queued before it. Throws if this or an earlier write failed.
     */
    async flush<T = void>(alsoWrite?: () => T): Promise<T> {
      const value = await queue(alsoWrite, false);
      if (failed !== undefined) throw failed;
      return value;
    },
    /**
     * Queues what was recorded (and `alsoWrite`) without waiting for it: it commits with the next
     * write anyone awaits (or within a few ms), so it costs no commit of its own. The next `flush`
     * waits for it.
     */
    flushInBackground(alsoWrite?: () => void): void {
      queue(alsoWrite, true).catch(() => undefined);
    },
    /** Forget what was not flushed (the exchange it belongs to did not finish). */
    discard(): void {
      pending = [];
    },
  };
}

export type Recorder = ReturnType<typeof makeRecorder>;
