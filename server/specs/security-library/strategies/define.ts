import type { Attack } from "../attack.js";
import type { Random } from "../random.js";

/**
 * A way of sending an attack that a filter or a cautious agent may not see for what it is:
 * an encoding, another language, the attack spread over turns, a long prefix. Adding one is a
 * file that defines it, and a line in `index.ts`.
 */
export interface Strategy {
  name: string;
  /** What it does to the attack, for the docs and the coverage. */
  description: string;
  /** The attack as sent; undefined where the strategy does not apply to it (it says why in `notFor`). */
  apply(attack: Attack, random: Random): Attack | undefined;
  /** The attack back from what `apply` sent. */
  reveal(sent: Attack): Attack;
  /** Why it does not apply to some attacks, for the coverage. */
  notFor?: string;
}

export function defineStrategy(strategy: Strategy): Strategy {
  return strategy;
}

/**
 * A strategy that encodes the payload (the planted text, or each user message) and asks, before
 * it, for it to be decoded and followed. The preamble holds no blank line, so the encoded text
 * starts after the first.
 */
export function encodingStrategy({
  name,
  description,
  encode,
  decode,
  preambles,
}: {
  name: string;
  description: string;
  encode: (text: string) => string;
  decode: (text: string) => string;
  /** Asks for the text to be decoded; none sends the encoded text alone. */
  preambles: readonly string[];
}): Strategy {
  const wrap = (text: string, random: Random) =>
    preambles.length === 0 ? encode(text) : `${random.pick(preambles)}\n\n${encode(text)}`;
  const unwrap = (text: string) => decode(preambles.length === 0 ? text : text.slice(text.indexOf("\n\n") + 2));
  return defineStrategy({
    name,
    description,
    apply: (attack, random) =>
      attack.injected !== undefined
        ? { ...attack, injected: wrap(attack.injected, random) }
        : { ...attack, turns: attack.turns.map((turn) => wrap(turn, random)) },
    reveal: (sent) =>
      sent.injected !== undefined
        ? { ...sent, injected: unwrap(sent.injected) }
        : { ...sent, turns: sent.turns.map(unwrap) },
  });
}
