import { describe, expect, it } from "@jest/globals";
import { allocateSlots } from "../../../server/webhooks/fair-claims.js";

const caps = { total: 8, perEndpoint: 4, failingTotal: 2 };
const endpoint = (webhook_id: string, failing = false, last_claimed_at: string | null = null) => ({
  webhook_id,
  failing,
  last_claimed_at,
});

describe("fair webhook claims", () => {
  it("gives healthy endpoints their turn before failing ones, one each per round, up to each one's cap", () => {
    const dead = Array.from({ length: 20 }, (_, i) => endpoint(`dead-${i}`, true));
    const given = allocateSlots([...dead, endpoint("healthy")], {}, 8, caps);
    expect(given.get("healthy")).toBe(4);
    // Failing endpoints: one in flight each, two together, whatever their number.
    expect([...given].filter(([id]) => id.startsWith("dead")).map(([, n]) => n)).toEqual([1, 1]);
  });

  it("goes round the endpoints, least recently claimed first", () => {
    const given = allocateSlots(
      [endpoint("a", false, "2026-01-01T00:00:02Z"), endpoint("b", false, "2026-01-01T00:00:01Z"), endpoint("c")],
      {},
      2,
      caps,
    );
    expect([...given.keys()]).toEqual(["c", "b"]);
  });

  it("counts what is in flight against every cap", () => {
    const given = allocateSlots(
      [endpoint("h"), endpoint("d1", true), endpoint("d2", true)],
      { h: 3, d1: 1, x: 3 },
      8,
      caps,
    );
    expect(Object.fromEntries(given)).toEqual({ h: 1 });
  });
});
