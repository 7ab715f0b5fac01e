import type { TypedEvent } from "../contract/index.js";
import { makeKeyLocks } from "./sql/key-locks.js";
import type { Sql } from "./sql/sql.js";

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
  db: Sql,
  outbox: { enqueueRunEvents(runId: string, from: number, to: number, now: string): Promise<void> },
) {
  const locks = makeKeyLocks(db);
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

  const appendEvents = async (runId: string, events: readonly LoggedEvent[]): Promise<void> =>
    db.transaction(async () => {
      // Appends to one run's log take turns across nodes: the later one reads where the first ended.
      await locks.lock("run log", runId);
      const last = (await lastSequence.get<number>(runId))!;
      for (const [i, event] of events.entries()) {
        if (event.sequence !== last + 1 + i) {
          throw new SequenceConflictError(
            `Run ${runId}'s log ends at ${last + i}; event ${event.sequence} (${event.type}) does not follow it`,
          );
        }
        await insert.run(
          runId,
          event.sequence,
          event.event_id,
          event.type,
          event.occurred_at,
          event.conversation_id,
          event.turn,
          JSON.stringify(event.data),
        );
      }
      // Their webhook deliveries, in the same transaction: an event written is an event that will be sent.
      if (events.length > 0) {
        await outbox.enqueueRunEvents(runId, events[0]!.sequence, events.at(-1)!.sequence, events.at(-1)!.occurred_at);
      }
    });

  return {
    reads: {
      /** The sequence of the run's last event, 0 if it has none. */
      async getLastSequence(runId: string): Promise<number> {
        return (await lastSequence.get<number>(runId))!;
      },
      /** Events after a sequence number, ascending; `limit + 1` rows tell whether more follow. */
      async listEvents(runId: string, afterSequence: number, limit: number): Promise<EventRow[]> {
        return page.all<EventRow>(runId, afterSequence, limit);
      },
      async getEvent(runId: string, sequence: number): Promise<EventRow | undefined> {
        return one.get<EventRow>(runId, sequence);
      },
      async listConversationEvents(conversationId: string, turn?: number): Promise<EventRow[]> {
        return turn === undefined
          ? ofConversation.all<EventRow>(conversationId)
          : ofTurn.all<EventRow>(conversationId, turn);
      },
    },
    writes: {
      appendEvents,
    },
  };
}
