import { describe, expect, it } from "@jest/globals";
import { makeApiActivity } from "../../../server/http/api-activity.js";
import { makeTokenBucket } from "../../../server/webhooks/token-bucket.js";

describe("the API's activity", () => {
  it("is busy while at least the threshold of requests started in the last second", () => {
    let now = 10_000;
    const activity = makeApiActivity({ threshold: 3, now: () => now });
    activity.requestStarted();
    activity.requestStarted();
    expect(activity.busy()).toBe(false);
    now += 600;
    activity.requestStarted();
    expect(activity.busy()).toBe(true);
    now += 500; // the first two are now more than a second old
    expect(activity.busy()).toBe(false);
    now += 5_000; // a long quiet spell forgets everything
    activity.requestStarted();
    expect(activity.busy()).toBe(false);
  });
});

describe("the token bucket", () => {
  it("allows a tenth of a second's worth at once, then refills at the rate", () => {
    let now = 0;
    const bucket = makeTokenBucket(200, () => now);
    expect(bucket.available()).toBe(20);
    bucket.take(20);
    expect(bucket.available()).toBe(0);
    expect(bucket.msUntilNext()).toBe(5);
    now += 50;
    expect(bucket.available()).toBe(10);
    now += 10_000; // never more than its capacity
    expect(bucket.available()).toBe(20);
  });

  it("starts at most the rate over a long stretch", () => {
    let now = 0;
    const bucket = makeTokenBucket(250, () => now);
    let started = 0;
    for (; now < 10_000; now += 7) {
      const n = bucket.available();
      bucket.take(n);
      started += n;
    }
    expect(started).toBeLessThanOrEqual(250 * 10 + 25);
    expect(started).toBeGreaterThanOrEqual(250 * 10 - 25);
  });

  it("lets a slow rate through one at a time", () => {
    const now = 0;
    const bucket = makeTokenBucket(2, () => now);
    expect(bucket.available()).toBe(1);
    bucket.take(1);
    expect(bucket.msUntilNext()).toBe(500);
  });
});
