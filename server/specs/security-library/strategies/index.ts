import type { Attack } from "../attack.js";
import type { Random } from "../random.js";
import { base64 } from "./base64.js";
import type { Strategy } from "./define.js";
import { homoglyphs } from "./homoglyphs.js";
import { languageSwitch } from "./language-switch.js";
import { leetspeak } from "./leetspeak.js";
import { manyShot } from "./many-shot.js";
import { payloadSplitting } from "./payload-splitting.js";
import { rot13 } from "./rot13.js";

export type { Strategy } from "./define.js";

/** Every strategy, in the order the docs list them. */
export const STRATEGIES = [base64, rot13, leetspeak, homoglyphs, languageSwitch, payloadSplitting, manyShot] as const;
export const STRATEGY_NAMES = STRATEGIES.map((strategy) => strategy.name) as [string, ...string[]];

const BY_NAME = new Map<string, Strategy>(STRATEGIES.map((strategy) => [strategy.name, strategy]));
export const strategyNamed = (name: string): Strategy | undefined => BY_NAME.get(name);

/**
 * Strategies applied in order (a combination: `[base64, many-shot]` encodes, then prefixes);
 * undefined, with the one that does not apply, when one of them cannot take the attack.
 */
export function applyStrategies(
  attack: Attack,
  names: readonly string[],
  random: Random,
): { sent: Attack } | { notApplied: string } {
  let sent = attack;
  for (const name of names) {
    const strategy = BY_NAME.get(name)!;
    const next = strategy.apply(sent, random);
    if (!next) return { notApplied: `${name} does not apply to ${strategy.notFor ?? "this attack"}` };
    sent = next;
  }
  return { sent };
}

/** The attack back from what a combination sent: each strategy's reveal, last first. */
export function revealStrategies(sent: Attack, names: readonly string[]): Attack {
  return [...names].reverse().reduce((attack, name) => BY_NAME.get(name)!.reveal(attack), sent);
}
