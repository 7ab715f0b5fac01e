import type { ConversationRow } from "../store/index.js";
import type { HeldConversation } from "./conversation-facts.js";

/**
 * The completed conversations of a run, as evaluators read them: all of them in the plan's order,
 * or those of one scenario (or probe). A run may hold thousands: each conversation is made from
 * its events when an evaluator reaches it, and not kept after.
 */
export interface ConversationSource {
  readonly count: number;
  /** Every conversation, in order. */
  all(): Iterable<HeldConversation>;
  /** The conversations of a scenario (a table's row: `id[key]`) or a security probe. */
  of(kind: "scenario" | "probe", id: string): HeldConversation[];
}

const keyOf = (kind: string, id: string) => `${kind}\0${id}`;

function indexBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const index = new Map<string, T[]>();
  for (const item of items) {
    const list = index.get(key(item));
    if (list) list.push(item);
    else index.set(key(item), [item]);
  }
  return index;
}

/** Conversations made, when asked for, from their rows (in order) by `hold`. */
export function lazyConversations(rows: readonly ConversationRow[], hold: (row: ConversationRow) => HeldConversation): ConversationSource {
  const byScenario = indexBy(rows, (row) => keyOf(row.kind, row.scenario_id));
  return {
    count: rows.length,
    *all() {
      for (const row of rows) yield hold(row);
    },
    of: (kind, id) => (byScenario.get(keyOf(kind, id)) ?? []).map(hold),
  };
}

/** Conversations already made (a few, in tests). */
export function heldConversations(held: readonly HeldConversation[]): ConversationSource {
  const byScenario = indexBy(held, (one) => keyOf(one.conversation.kind, one.conversation.scenario_id));
  return { count: held.length, all: () => held, of: (kind, id) => byScenario.get(keyOf(kind, id)) ?? [] };
}
