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
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** Random bytes drawn from a pool refilled 4 KiB at a time: one system call per 256 ids, not per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
function drawRandom(): number[] {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const digits = Array.from(pool.subarray(poolOffset, poolOffset + RANDOM_CHARS), (byte) => byte & 31);
  poolOffset += RANDOM_CHARS;
  return digits;
}

/**
 * Makes ULID-style ids (48-bit millisecond time + 80 random bits) that sort in creation order,
 * also within one millisecond: the random part is incremented instead of redrawn.
 */
export function makeIdGenerator(clock: Clock) {
  let lastTime = -1;
  let lastRandom: number[] = [];

  function nextRandom(time: number): number[] {
    if (time === lastTime) {
      const next = [...lastRandom];
      for (let i = next.length - 1; i >= 0; i--) {
        if (next[i]! < 31) {
          next[i]! += 1;
          return next;
        }
        next[i] = 0;
      }
    }
    return drawRandom();
  }

  return function newId(kind: IdKind): string {
    const time = Math.max(clock.now().getTime(), lastTime);
    const random = nextRandom(time);
    lastTime = time;
    lastRandom = random;
    let timePart = "";
    for (let t = time, i = 0; i < TIME_CHARS; i++, t = Math.floor(t / 32)) {
      timePart = ALPHABET[t % 32] + timePart;
    }
    return `${ID_PREFIXES[kind]}_${timePart}${random.map((n) => ALPHABET[n]).join("")}`;
  };
}

export type NewId = ReturnType<typeof makeIdGenerator>;
