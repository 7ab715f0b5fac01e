import { randomFillSync } from "node:crypto";
import type { Clock } from "./clock.js";

/** Prefixes make an id's kind obvious in logs, URLs and support tickets. */
export const ID_PREFIXES = {
  project: "prj",
  agent: "agt",
  environment: "env",
  testSpec: "tsp",
  run: "run",
  apiKey: "key",
  request: "req",
  event: "evt",
  conversation: "cnv",
  evaluation: "evl",
  finding: "fnd",
  decision: "dec",
  waiver: "wvr",
  approval: "apv",
  webhook: "whk",
  auditEvent: "aud",
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** Random bytes drawn from a pool refilled 4 KiB at a time: one system call per 256 ids, not per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
function drawRandom(into: Uint8Array): void {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) into[i] = pool[poolOffset + i]! & 31;
  poolOffset += RANDOM_CHARS;
}

function encodeTime(time: number): string {
  let text = "";
  for (let t = time, i = 0; i < TIME_CHARS; i++, t = Math.floor(t / 32)) text = ALPHABET[t % 32] + text;
  return text;
}

/**
 * Makes ULID-style ids (48-bit millisecond time + 80 random bits) that sort in creation order,
 * also within one millisecond: the random part is incremented instead of redrawn.
 */
export function makeIdGenerator(clock: Clock) {
  let lastTime = -1;
  let timePart = "";
  const random = new Uint8Array(RANDOM_CHARS);

  /** The next random part within the same millisecond: one more, as a base-32 number. */
  function increment(): void {
    for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
      if (random[i]! < 31) {
        random[i]! += 1;
        return;
      }
      random[i] = 0;
    }
  }

  return function newId(kind: IdKind): string {
    const time = Math.max(clock.now().getTime(), lastTime);
    if (time === lastTime) {
      increment();
    } else {
      drawRandom(random);
      lastTime = time;
      timePart = encodeTime(time);
    }
    let id = `${ID_PREFIXES[kind]}_${timePart}`;
    for (let i = 0; i < RANDOM_CHARS; i++) id += ALPHABET[random[i]!];
    return id;
  };
}

export type NewId = ReturnType<typeof makeIdGenerator>;
