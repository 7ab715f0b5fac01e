import { describe, expect, it } from "@jest/globals";
import { decideRate, normalQuantile, wilsonInterval } from "../../../server/specs/pass-rate.js";

describe("statistics", () => {
  it("computes normal quantiles", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.005)).toBeCloseTo(-2.575829, 5);
  });
  it("computes Wilson intervals", () => {
    const { lower, upper } = wilsonInterval(8, 10, 0.95);
    expect(lower).toBeCloseTo(0.4902, 3);
    expect(upper).toBeCloseTo(0.9433, 3);
  });
  it("passes, fails, or says how many samples would settle it", () => {
    expect(decideRate(100, 100, 0.9, 0.95).status).toBe("passed");
    expect(decideRate(0, 20, 0.5, 0.95).status).toBe("failed");
    const open = decideRate(2, 3, 0.6, 0.95);
    expect(open.status).toBe("inconclusive");
    expect(open.samplesToSettle).toBeGreaterThan(3);
    expect(decideRate(3, 5, 0.6, 0.95).samplesToSettle).toBeNull(); // observed exactly at the bar
  });
});
