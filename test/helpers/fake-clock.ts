import type { Clock } from "../../server/clock.js";

/** A clock the test moves by hand. */
export class FakeClock implements Clock {
  #now: number;
  constructor(start = Date.parse("2026-01-15T10:00:00.000Z")) {
    this.#now = start;
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}

/** The real time, moved ahead by hand: for a service that must keep running while a test skips time. */
export class ShiftedClock implements Clock {
  #offset = 0;
  now(): Date {
    return new Date(Date.now() + this.#offset);
  }
  advance(ms: number): void {
    this.#offset += ms;
  }
}
