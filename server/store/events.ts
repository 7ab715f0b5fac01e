import type { Db } from "./db.js";

export interface EventRow {
  run_id: string;
  sequence: number;
  event_id: string;
  type: string;
  occurred_at: string;
  conversation_id: string | null;
  turn: number | null;
  /** JSON object: the type's payload. */
  data: string;
}

export interface NewEvent {
  event_id: string;
  type: string;
  occurred_at: string;
  conversation_id?: string | null | undefined;
  turn?: number | null | undefined;
  data: Record<string, unknown>;
}

/**
 * A run's event log, which is also its trace. Sequence numbers are gap-free from 1 per run:
 * each append takes the next numbers inside the caller's transaction.
 */
export function makeEventsStore(db: Db) {
  const lastSequence = db.prepare("SELECT COALESCE(MAX(sequence), 0) FROM run_events WHERE run_id = ?").pluck();
  const insert = db.prepare(`INSERT INTO run_events (run_id, sequence, event_id, type, occurred_at, conversation_id, turn, data)
    VALUES (@run_id, @sequence, @event_id, @type, @occurred_at, @conversation_id, @turn, @data)`);
  const page = db.prepare("SELECT * FROM run_events WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?");
  const one = db.prepare("SELECT * FROM run_events WHERE run_id = ? AND sequence = ?");
  const ofConversation = db.prepare("SELECT * FROM run_events WHERE conversation_id = ? ORDER BY sequence");
  const ofTurn = db.prepare("SELECT * FROM run_events WHERE conversation_id = ? AND turn = ? ORDER BY sequence");

  const appendEvents = db.transaction((runId: string, events: readonly NewEvent[]): EventRow[] => {
    let sequence = lastSequence.get(runId) as number;
    return events.map((event) => {
      const row: EventRow = {
        run_id: runId,
        sequence: ++sequence,
        event_id: event.event_id,
        type: event.type,
        occurred_at: event.occurred_at,
        conversation_id: event.conversation_id ?? null,
        turn: event.turn ?? null,
        data: JSON.stringify(event.data),
      };
      insert.run(row);
      return row;
    });
  });

  return {
    appendEvents,
    /** Events after a sequence number, ascending; `limit + 1` rows tell whether more follow. */
    listEvents(runId: string, afterSequence: number, limit: number): EventRow[] {
      return page.all(runId, afterSequence, limit) as EventRow[];
    },
    getEvent(runId: string, sequence: number): EventRow | undefined {
      return one.get(runId, sequence) as EventRow | undefined;
    },
    listConversationEvents(conversationId: string, turn?: number): EventRow[] {
      return (turn === undefined ? ofConversation.all(conversationId) : ofTurn.all(conversationId, turn)) as EventRow[];
    },
  };
}
