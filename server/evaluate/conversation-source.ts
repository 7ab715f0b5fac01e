import type { ConversationRow } from "../store/index.js";
import type { HeldConversation } from "./conversation-facts.js";

/**
 * The completed conversations of a run, as evaluators read them: all of them in the plan's order,
 * or those of one scenario (or probe). A run may hold thousands: each conversation is made from
 * its events when an evaluator reaches it, and not kept after. A case tried again
 * (`defaults.retry_failed`) has several tries: its checks read the one that counts; what looks
 * at everything the agent did (leak detectors) reads every try.
 */
export interface ConversationSource {
  /** Every try. */
  readonly count: number;
  /** Every try of every conversation, in order. */
  all(): AsyncIterable<HeldConversation>;
  /** The conversations that count of a scenario (a table's row: `id[key]`) or a security probe. */
  of(kind: "scenario" | "probe", id: string): Promise<HeldConversation[]>;
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

/** Conversations made, when asked for, from their rows (in order) by `hold`; `counted`: the tries whose checks count (default: all). */
export function lazyConversations(
  rows: readonly ConversationRow[],
  hold: (row: ConversationRow) => Promise<HeldConversation>,
  counted: (row: ConversationRow) => boolean = () => true,
): ConversationSource {
  const byScenario = indexBy(rows.filter(counted), (row) => keyOf(row.kind, row.scenario_id));
  return {
    count: rows.length,
    async *all() {
      for (const row of rows) yield await hold(row);
    },
    async of(kind, id) {
      const held: HeldConversation[] = [];
      for (const row of byScenario.get(keyOf(kind, id)) ?? []) held.push(await hold(row));
      return held;
    },
  };
}

/** Conversations already made (a few, in tests). */
export function heldConversations(held: readonly HeldConversation[]): ConversationSource {
  const byScenario = indexBy(held, (one) => keyOf(one.conversation.kind, one.conversation.scenario_id));
  return {
    count: held.length,
    async *all() {
      yield* held;
    },
    of: async (kind, id) => byScenario.get(keyOf(kind, id)) ?? [],
  };
}
