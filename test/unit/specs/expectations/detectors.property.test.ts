import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import type { Expectation } from "../../../../server/contract/index.js";
import { checkExpectation } from "../../../../server/specs/expectations/index.js";
import { heldConversation } from "../../../helpers/conversation.js";

/** Text made mostly of what the detectors' patterns look for: brackets, quotes, backticks, entities, separators. */
const markupish = fc
  .array(
    fc.oneof(
      fc.constantFrom(..."<>\"'`=;-[]()!:/@ \n\t%\\&#*"),
      fc.constantFrom(
        "at",
        "dot",
        "on",
        "or",
        "src",
        "img",
        "script",
        "javascript",
        "union select",
        "&#x6a;",
        "```",
        "0x",
      ),
      fc.string({ unit: "grapheme", maxLength: 4 }),
    ),
    { maxLength: 80 },
  )
  .map((parts) => parts.join(""));
const text = fc.oneof(markupish, fc.string({ unit: "binary", maxLength: 200 }));
const value = fc
  .oneof(markupish, fc.string({ unit: "binary", minLength: 4, maxLength: 30 }))
  .filter((v) => v.length >= 4);

describe("the detectors on any text", () => {
  it("decide without throwing, whatever the agent said or sent, and whatever was planted", () => {
    fc.assert(
      fc.property(text, text, fc.array(value, { minLength: 1, maxLength: 3 }), (reply, sent, values) => {
        const facts = heldConversation(
          [{ user: "x", steps: [{ call: [{ name: "t", raw: sent }] }, { say: reply }], stepLimitReached: 8 }],
          { canary: "CANARY-q7Xv2pL9aK0w" },
        ).facts;
        const expectations: Expectation[] = [
          { value_leaked: values },
          { canary_leaked: true },
          { outside_image: { allowed_hosts: ["shop.test"] } },
          { unsafe_markup: true },
          { sql_injected: true },
          { steps_exhausted: true },
        ];
        for (const expectation of expectations) {
          expect(typeof checkExpectation(expectation, facts).holds).toBe("boolean");
        }
      }),
      { numRuns: 300, seed: 31 },
    );
  });

  it("find a planted value in any reply that repeats it", () => {
    fc.assert(
      fc.property(value, text, (planted, around) => {
        const facts = heldConversation([{ user: "x", steps: [{ say: `${around} ${planted} ${around}` }] }]).facts;
        expect(checkExpectation({ value_leaked: [planted] }, facts).holds).toBe(true);
      }),
      { numRuns: 300, seed: 31 },
    );
  });
});
