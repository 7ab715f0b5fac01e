import { describe, expect, it } from "@jest/globals";
import type { Expectation } from "../../../server/contract/index.js";
import type { ConversationFacts } from "../../../server/evaluate/conversation-facts.js";
import { checkExpectation } from "../../../server/evaluate/expectations.js";
import { passesLuhn, DETECTORS } from "../../../server/evaluate/leak-detectors.js";
import { partialMatch } from "../../../server/evaluate/partial-match.js";
import { decideRate, normalQuantile, wilsonInterval } from "../../../server/evaluate/statistics.js";

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

describe("partialMatch", () => {
  it("matches nested subsets and nothing else", () => {
    expect(partialMatch({ order_id: "A-100" }, { order_id: "A-100", note: "x" })).toBe(true);
    expect(partialMatch({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBe(true);
    expect(partialMatch({ amount: 42.5 }, { amount: "42.5" })).toBe(false);
    expect(partialMatch({ tags: ["a"] }, { tags: ["a", "b"] })).toBe(false);
    expect(partialMatch({ missing: null }, {})).toBe(false);
  });
});

describe("leak detectors", () => {
  const fires = (id: string, text: string) => DETECTORS.find((d) => d.id === id)!.find(text);
  it("tells card numbers from other digit runs with Luhn", () => {
    expect(passesLuhn("4111111111111111")).toBe(true);
    expect(passesLuhn("4111111111111112")).toBe(false);
    expect(fires("detector.payment_card", "card 4111-1111-1111-1111")).toBe(true);
    expect(fires("detector.payment_card", "order 1234567890123456")).toBe(false);
  });
  it("recognises common credential formats", () => {
    expect(fires("detector.credential", "key AKIAIOSFODNN7EXAMPLE")).toBe(true);
    expect(fires("detector.credential", `token ghp_${"a".repeat(36)}`)).toBe(true);
    expect(fires("detector.credential", "-----BEGIN RSA PRIVATE KEY-----")).toBe(true);
    expect(fires("detector.credential", "order A-100 refunded")).toBe(false);
  });
});

describe("checkExpectation", () => {
  const facts = (names: string[]): ConversationFacts => ({
    run_id: "run_1",
    conversation: { conversation_id: "cnv_1", run_id: "run_1", kind: "scenario", scenario_id: "s", repeat_index: 1, attempt: 1, status: "completed", canary: null, created_at: "", ended_at: null },
    events: [],
    turns: [1, 2],
    toolCalls: names.map((name, i) => ({ sequence: i + 1, turn: 1, name, arguments: {}, arguments_raw: "{}" })),
    replies: [{ sequence: 10, turn: 2, content: "Refund R-1 issued", has_tool_calls: false, latency_ms: 12 }],
    outputs: [],
    ref: { event: (s) => `/t/${s}`, turn: (t) => `/turn/${t}`, conversation: () => "/c" },
  });
  const check = (e: Expectation, names: string[]) => checkExpectation(e, facts(names)).holds;

  it.each([
    ["in_order", ["a", "x", "b"], true],
    ["in_order", ["b", "a"], false],
    ["exact", ["a", "b"], true],
    ["exact", ["a", "x", "b"], false],
    ["any_order", ["b", "a"], true],
    ["any_order", ["a", "a"], false],
  ] as const)("tool_sequence %s over %j is %s", (mode, names, expected) => {
    expect(check({ tool_sequence: { tools: ["a", "b"], mode } }, [...names])).toBe(expected);
  });

  it("checks replies, counts and latency", () => {
    expect(check({ response: { matches: "(?i)REFUND", not_contains: ["R-2"] } }, [])).toBe(true);
    expect(check({ response: { contains: "nothing like this" } }, [])).toBe(false);
    expect(check({ max_tool_calls: 1 }, ["a", "b"])).toBe(false);
    expect(check({ latency_ms: { max: 5 } }, [])).toBe(false);
    expect(checkExpectation({ tool_not_called: "b" }, facts(["a", "b"])).evidence_refs).toEqual(["/t/2"]);
  });
});
