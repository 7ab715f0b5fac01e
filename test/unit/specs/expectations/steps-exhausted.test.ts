import { describe, expect, it } from "@jest/globals";
import { checkExpectation } from "../../../../server/specs/expectations/index.js";
import { heldConversation } from "../../../helpers/conversation.js";

const looping = { call: [{ name: "check_status", args: { id: "A-100" } }] };

describe("steps_exhausted", () => {
  it("holds when a turn ended at its step limit, citing where it was recorded", () => {
    const held = heldConversation([
      { user: "hi", steps: [{ say: "hello" }] },
      { user: "wait until it ships", steps: [looping, looping, looping], stepLimitReached: 3 },
    ]);
    expect(checkExpectation({ steps_exhausted: true }, held.facts)).toMatchObject({
      holds: true,
      reason: "turn 2 used all 3 steps and still called tools",
      sequences: [10],
    });
    expect(checkExpectation({ steps_exhausted: true }, held.inTurn(1))).toMatchObject({ holds: false });
    expect(checkExpectation({ steps_exhausted: true }, held.inTurn(2))).toMatchObject({ holds: true });
  });

  it("does not hold when the agent answered within its steps, however many tools it called", () => {
    const busy = heldConversation([{ user: "wait until it ships", steps: [looping, looping, { say: "shipped" }] }]);
    expect(checkExpectation({ steps_exhausted: true }, busy.facts)).toMatchObject({ holds: false, sequences: [] });
  });

  it("is not judged for an agent that runs its own tools: its loop is not counted in steps", () => {
    const own = { ...heldConversation([{ user: "x", steps: [{ say: "done" }] }]).facts, toolsRunBy: "agent" as const };
    expect(checkExpectation({ steps_exhausted: true }, own)).toMatchObject({ holds: false, inconclusive: true });
  });
});
