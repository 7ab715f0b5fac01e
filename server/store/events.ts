import type { TypedEvent } from "../contract/index.js";
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

/** An event with its payload as an object: as recorded, or as read back (`toLoggedEvent`). */
export type LoggedEvent = TypedEvent & {
  /** Assigned by whoever records the run's events: one more than the last one logged. */
  sequence: number;
  event_id: string;
  occurred_at: string;
  conversation_id: string | null;
  turn: number | null;
};

/** Only the engine writes events, from typed values: what it wrote is what is read back. */
export function toLoggedEvent(row: EventRow): LoggedEvent {
  return { ...row, data: JSON.parse(row.data) } as LoggedEvent;
}

/** Appending events that do not follow the last logged one: someone else wrote to this run's log. */
export class SequenceConflictError extends Error {
  override name = "SequenceConflictError";
}

/**
 * A run's event log, which is also its trace. Sequence numbers are gap-free from 1 per run: an
 * append must continue the log exactly where it ends (an optimistic check, as an event store's
 * expected version), so a writer that lost track of the run can never leave a gap or a fork.
 */
export function makeEventsStore(
  db: Db,
  outbox: { enqueueRunEvents(runId: string, from: number, to: number, now: string): void },
) {
  const lastSequence = db
    .prepare("SELECT COALESCE(MAX(sequence), 0) AS sequence FROM run_events WHERE run_id = ?")
    .pluck();
  const insert =
    db.prepare(`INSERT INTO run_events (run_id, sequence, event_id, type, occurred_at, conversation_id, turn, data)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const page = db.prepare("SELECT * FROM run_events WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?");
  const one = db.prepare("SELECT * FROM run_events WHERE run_id = ? AND sequence = ?");
  const ofConversation = db.prepare("SELECT * FROM run_events WHERE conversation_id = ? ORDER BY sequence");
  const ofTurn = db.prepare("SELECT * FROM run_events WHERE conversation_id = ? AND turn = ? ORDER BY sequence");

  const appendEvents = db.transaction((runId: string, events: readonly LoggedEvent[]): void => {
    const last = lastSequence.get(runId) as number;
    events.forEach((event, i) => {
      if (event.sequence !== last + 1 + i) {
        throw new SequenceConflictError(
          `Run ${runId}'s log ends at ${last + i}; event ${event.sequence} (${event.type}) does not follow it`,
        );
      }
      insert.run(
        runId,
        event.sequence,
        event.event_id,
        event.type,
        event.occurred_at,
        event.conversation_id,
        event.turn,
        JSON.stringify(event.data),
      );
    });
    // Their webhook deliveries, in the same transaction: an event written is an event that will be sent.
    if (events.length > 0) {
      outbox.enqueueRunEvents(runId, events[0]!.sequence, events.at(-1)!.sequence, events.at(-1)!.occurred_at);
    }
  });

  return {
    reads: {
      /** The sequence of the run's last event, 0 if it has none. */
      getLastSequence(runId: string): number {
        return lastSequence.get(runId) as number;
      },
      /** Events after a sequence number, ascending; `limit + 1` rows tell whether more follow. */
      listEvents(runId: string, afterSequence: number, limit: number): EventRow[] {
        return page.all(runId, afterSequence, limit) as EventRow[];
      },
      getEvent(runId: string, sequence: number): EventRow | undefined {
        return one.get(runId, sequence) as EventRow | undefined;
      },
      listConversationEvents(conversationId: string, turn?: number): EventRow[] {
        return (
          turn === undefined ? ofConversation.all(conversationId) : ofTurn.all(conversationId, turn)
        ) as EventRow[];
      },
    },
    writes: {
      appendEvents,
    },
  };
}
