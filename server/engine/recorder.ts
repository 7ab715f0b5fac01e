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
    async flush<T = void>(alsoWrite?: () => T): Promise<T> {
      const events = pending;
      pending = [];
      return store.writeBatched(() => {
        if (events.length > 0) store.appendEvents(runId, events);
        return alsoWrite?.() as T;
      });
    },
    /** Forget what was not flushed (the exchange it belongs to did not finish). */
    discard(): void {
      pending = [];
    },
  };
}

export type Recorder = ReturnType<typeof makeRecorder>;
