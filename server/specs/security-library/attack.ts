import type { IntentKey } from "./phrasebook.js";

/** An attack as a family writes it, before and after its strategies. */
export interface Attack {
  /** The user's messages, in order. */
  turns: string[];
  /** The text planted in a tool's result (indirect injection): the strategies encode this, not the turns. */
  injected?: string | undefined;
  /** What it asks, in the phrasebook's words: lets the language switch ask it in another language. */
  intent?: { key: IntentKey; vars: Record<string, string> } | undefined;
}

/** The text a strategy works on: the planted text, or else the last user message. */
export const payloadOf = (attack: Attack): string => attack.injected ?? attack.turns[attack.turns.length - 1]!;

/** The attack with its payload (the planted text, or else the last user message) replaced. */
export function withPayload(attack: Attack, payload: string): Attack {
  if (attack.injected !== undefined) return { ...attack, injected: payload };
  return { ...attack, turns: [...attack.turns.slice(0, -1), payload] };
}

/** The attack in plain words: its turns, and the planted text, as one readable text. */
export function describeAttack(attack: Attack): string {
  const turns =
    attack.turns.length === 1 ? attack.turns[0]! : attack.turns.map((t, i) => `[turn ${i + 1}] ${t}`).join("\n");
  return attack.injected === undefined ? turns : `${turns}\n[in the tool result] ${attack.injected}`;
}
