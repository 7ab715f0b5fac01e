import { describe, expect, it } from "@jest/globals";
import type { Expectation } from "../../../server/contract/index.js";
import { checkExpectation } from "../../../server/specs/expectations/index.js";
import { partialMatch } from "../../../server/specs/partial-match.js";
import { heldConversation } from "../../helpers/conversation.js";

const calls = (...names: string[]) =>
  heldConversation([{ user: "go", steps: [{ call: names.map((name) => ({ name })) }, { say: "done" }] }]).facts;

describe("partialMatch", () => {
  it("matches nested subsets and nothing else", () => {
    expect(partialMatch({ order_id: "A-100" }, { order_id: "A-100", note: "x" })).toBe(true);
    expect(partialMatch({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBe(true);
    expect(partialMatch({ amount: 42.5 }, { amount: "42.5" })).toBe(false);
    expect(partialMatch({ tags: ["a"] }, { tags: ["a", "b"] })).toBe(false);
    expect(partialMatch({ missing: null }, {})).toBe(false);
  });
});

describe("expectation kinds", () => {
  const holds = (expectation: Expectation, facts = calls()) => checkExpectation(expectation, facts).holds;

  it.each([
    ["in_order", ["a", "x", "b"], true],
    ["in_order", ["b", "a"], false],
    ["exact", ["a", "b"], true],
    ["exact", ["a", "x", "b"], false],
    ["any_order", ["b", "a"], true],
    ["any_order", ["a", "a"], false],
  ] as const)("tool_sequence %s over %j is %s", (mode, names, expected) => {
    expect(holds({ tool_sequence: { tools: ["a", "b"], mode } }, calls(...names))).toBe(expected);
  });

  it("tool_called matches arguments partially and cites the call; a call with other arguments is cited as why it failed", () => {
    const facts = heldConversation([
      { user: "go", steps: [{ call: [{ name: "lookup", args: { id: "A-1", extra: true } }] }] },
    ]).facts;
    expect(checkExpectation({ tool_called: { name: "lookup", args: { id: "A-1" } } }, facts)).toMatchObject({
      holds: true,
      sequences: [3],
    });
    expect(checkExpectation({ tool_called: { name: "lookup", args: { id: "B-2" } } }, facts)).toMatchObject({
      holds: false,
      reason: expect.stringContaining('it got: {"id":"A-1","extra":true}'),
      sequences: [3],
    });
    expect(checkExpectation({ tool_called: { name: "refund" } }, facts)).toMatchObject({ holds: false, sequences: [] });
  });

  it("does not judge the tool calls of an agent that runs its own tools and reported none, but judges its text", () => {
    const unknown = { ...calls(), toolCallsKnown: false };
    for (const expectation of [
      { tool_not_called: "delete_account" },
      { tool_called: { name: "lookup" } },
      { tool_sequence: { tools: ["a", "b"], mode: "in_order" } },
      { max_tool_calls: 3 },
    ] as Expectation[]) {
      expect(checkExpectation(expectation, unknown)).toMatchObject({ holds: false, inconclusive: true, sequences: [] });
    }
    expect(checkExpectation({ response: { contains: "done" } }, unknown)).toMatchObject({ holds: true });
    expect(checkExpectation({ tool_not_called: "b" }, { ...calls("a"), toolCallsKnown: true })).toMatchObject({
      holds: true,
    });
  });

  it("tool_not_called cites every forbidden call", () => {
    expect(checkExpectation({ tool_not_called: "b" }, calls("a", "b", "b"))).toMatchObject({
      holds: false,
      sequences: [4, 5],
    });
    expect(holds({ tool_not_called: { name: "c" } }, calls("a", "b"))).toBe(true);
  });

  it("response reads every text of its scope: contains and matches hold if any text has them, not_contains fails if any does", () => {
    const facts = heldConversation([
      {
        user: "where is A-100?",
        steps: [{ say: "Checking A-100 now.", call: [{ name: "lookup" }] }, { say: "It was delivered." }],
      },
    ]).facts;
    expect(holds({ response: { contains: "Checking A-100" } }, facts)).toBe(true);
    expect(holds({ response: { contains: ["Checking", "delivered"], matches: "(?i)DELIVERED" } }, facts)).toBe(true);
    const refused = checkExpectation({ response: { not_contains: "Checking" } }, facts);
    expect(refused).toMatchObject({ holds: false, sequences: [2] }); // the text that has it, not the last reply
    expect(holds({ response: { contains: "refunded" } }, facts)).toBe(false);
  });

  it("response over an agent that said nothing: contains and matches fail, not_contains holds", () => {
    const silent = heldConversation([{ user: "hi", steps: [{ call: [{ name: "a" }] }] }]).facts;
    expect(checkExpectation({ response: { contains: "x", matches: "y" } }, silent)).toMatchObject({
      holds: false,
      reason: "the agent gave no text reply",
    });
    expect(checkExpectation({ response: { not_contains: "x" } }, silent)).toMatchObject({ holds: true, sequences: [] });
  });

  it("scopes a check to one turn when asked", () => {
    const held = heldConversation([
      { user: "one", steps: [{ say: "first answer" }] },
      { user: "two", steps: [{ call: [{ name: "a" }] }, { say: "second answer" }] },
    ]);
    expect(holds({ response: { contains: "first answer" } }, held.inTurn(2))).toBe(false);
    expect(holds({ response: { contains: "first answer" } }, held.facts)).toBe(true);
    expect(holds({ max_tool_calls: 0 }, held.inTurn(1))).toBe(true);
    expect(holds({ max_tool_calls: 0 }, held.inTurn(2))).toBe(false);
  });

  it("max_tool_calls and latency_ms count what happened; latency scores the share of calls in time", () => {
    expect(holds({ max_tool_calls: 1 }, calls("a", "b"))).toBe(false);
    const slow = heldConversation([
      {
        user: "hi",
        steps: [
          { say: "a", latency_ms: 50 },
          { say: "b", latency_ms: 5 },
        ],
      },
    ]).facts;
    expect(checkExpectation({ latency_ms: { max: 10 } }, slow)).toMatchObject({
      holds: false,
      score: 0.5,
      sequences: [2],
    });
  });

  it("canary_leaked holds when the conversation's canary shows up in a reply or in tool arguments", () => {
    const leaked = heldConversation(
      [{ user: "print it", steps: [{ call: [{ name: "send", args: { body: "CANARY-x1" } }] }] }],
      { canary: "CANARY-x1" },
    ).facts;
    expect(checkExpectation({ canary_leaked: true }, leaked)).toMatchObject({ holds: true, sequences: [3] });
    const kept = heldConversation([{ user: "print it", steps: [{ say: "no" }] }], { canary: "CANARY-x1" }).facts;
    expect(holds({ canary_leaked: true }, kept)).toBe(false);
  });
});
