import { describe, expect, it, jest } from "@jest/globals";
import { makeAgentPacer, makeAgentPacers, type CallFeedback } from "../../../server/net/agent-pacer.js";
import { parseRetryAfter } from "../../../server/net/json-call.js";

const answered: CallFeedback = { answered: true, tooManyRequests: false, retryAfterMs: undefined };
const tooMany: CallFeedback = { answered: false, tooManyRequests: true, retryAfterMs: undefined };
const never = new AbortController().signal;

/** A call the test ends by hand, with the feedback it chooses. */
function deferred() {
  let finish!: (feedback: CallFeedback) => void;
  const result = new Promise<CallFeedback>((resolve) => (finish = resolve));
  return { send: () => result, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the pace of an agent", () => {
  it("never has more calls in flight than its limit", async () => {
    const pacer = makeAgentPacer({ maxConcurrency: 3, ratePerMinute: null });
    const calls = Array.from({ length: 7 }, deferred);
    let peak = 0;
    const done = calls.map((call) =>
      pacer.call(
        () => {
          peak = Math.max(peak, pacer.inFlight);
          return call.send();
        },
        (feedback) => feedback,
        never,
      ),
    );
    await tick();
    expect(pacer.inFlight).toBe(3);
    for (const call of calls) {
      call.finish(answered);
      await tick();
    }
    await Promise.all(done);
    expect(peak).toBe(3);
  });

  it("halves its limit on a 429 once per round, and raises it by one after as many answers as the limit", async () => {
    const pacer = makeAgentPacer({ maxConcurrency: 8, ratePerMinute: null });
    const feedback = (f: CallFeedback) => f;
    // Eight calls sent under the same limit all get 429: one halving, not three.
    const round = Array.from({ length: 8 }, deferred);
    const sent = round.map((call) => pacer.call(call.send, feedback, never));
    await tick();
    for (const call of round) call.finish(tooMany);
    await Promise.all(sent);
    expect(pacer.limit).toBe(4);
    // A 429 to a call sent after that halving halves again.
    await pacer.call(async () => tooMany, feedback, never);
    expect(pacer.limit).toBe(2);
    // Two answers in a row at limit 2 raise it to 3; three more to 4; and so on, never past the maximum.
    for (let i = 0; i < 2; i++) await pacer.call(async () => answered, feedback, never);
    expect(pacer.limit).toBe(3);
    for (let i = 0; i < 3; i++) await pacer.call(async () => answered, feedback, never);
    expect(pacer.limit).toBe(4);
    for (let i = 0; i < 100; i++) await pacer.call(async () => answered, feedback, never);
    expect(pacer.limit).toBe(8);
    await pacer.call(async () => tooMany, feedback, never);
    await pacer.call(async () => tooMany, feedback, never);
    await pacer.call(async () => tooMany, feedback, never);
    await pacer.call(async () => tooMany, feedback, never);
    expect(pacer.limit).toBe(1); // never below one
  });

  it("sends nothing while the agent asked to wait (Retry-After), then goes on", async () => {
    let now = 1_000;
    const pacer = makeAgentPacer({ maxConcurrency: 4, ratePerMinute: null }, () => now);
    await pacer.call(
      async () => ({ answered: false, tooManyRequests: false, retryAfterMs: 60 }),
      (f) => f,
      never,
    );
    let started = false;
    const next = pacer.call(
      async () => {
        started = true;
        return answered;
      },
      (f) => f,
      never,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toBe(false);
    now += 60;
    await next;
    expect(started).toBe(true);
  });

  it("spaces its calls evenly to rate_limit_per_minute", async () => {
    const pacer = makeAgentPacer({ maxConcurrency: 16, ratePerMinute: 1200 }); // one per 50 ms
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, () =>
        pacer.call(
          async () => (starts.push(performance.now()), answered),
          (f) => f,
          never,
        ),
      ),
    );
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(45);
  });

  it("does not send a call whose signal aborted while it waited for its turn", async () => {
    const pacer = makeAgentPacer({ maxConcurrency: 1, ratePerMinute: null });
    const first = deferred();
    const running = pacer.call(first.send, (f) => f, never);
    const controller = new AbortController();
    let sent = false;
    const waiting = pacer.call(
      async () => ((sent = true), answered),
      (f) => f,
      controller.signal,
    );
    controller.abort(new Error("worker stopping"));
    first.finish(answered);
    await running;
    await expect(waiting).rejects.toThrow("worker stopping");
    expect(sent).toBe(false);
  });

  it("pauses every call for at most a minute however long one Retry-After asks", async () => {
    jest.useFakeTimers();
    try {
      const pacer = makeAgentPacer({ maxConcurrency: 1, ratePerMinute: null }, () => Date.now());
      await pacer.call(
        async () => ({ answered: false, tooManyRequests: true, retryAfterMs: 86_400_000 }),
        (f) => f,
        never,
      );
      let started = false;
      const next = pacer.call(
        async () => ((started = true), answered),
        (f) => f,
        never,
      );
      await jest.advanceTimersByTimeAsync(59_000);
      expect(started).toBe(false);
      await jest.advanceTimersByTimeAsync(1_000);
      await next;
      expect(started).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it("is shared by every run against an environment, and renewed when its settings change", () => {
    const pacers = makeAgentPacers();
    const settings = { maxConcurrency: 4, ratePerMinute: null };
    const pacer = pacers.forEnvironment("env_a", settings);
    expect(pacers.forEnvironment("env_a", { ...settings })).toBe(pacer);
    expect(pacers.forEnvironment("env_b", settings)).not.toBe(pacer);
    expect(pacers.forEnvironment("env_a", { maxConcurrency: 2, ratePerMinute: null })).not.toBe(pacer);
  });
});

describe("Retry-After", () => {
  it("reads delay-seconds and HTTP dates, and ignores what it cannot read", () => {
    const now = Date.parse("2026-11-23T10:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Mon, 23 Nov 2026 10:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Mon, 23 Nov 2026 09:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
