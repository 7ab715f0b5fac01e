import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { EventRow, NewEvent, Store } from "../store/index.js";

/**
 * Collects a run's events as they happen (stamped with their time at once) and writes them in
 * one transaction per flush, so an agent exchange and its tool calls land together.
 */
export function makeRecorder(store: Pick<Store, "appendEvents">, runId: string, clock: Clock, newId: NewId) {
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
    flush(): EventRow[] {
      if (pending.length === 0) return [];
      const rows = store.appendEvents(runId, pending);
      pending = [];
      return rows;
    },
    /** Forget what was not flushed (the exchange it belongs to did not finish). */
    discard(): void {
      pending = [];
    },
  };
}

export type Recorder = ReturnType<typeof makeRecorder>;
