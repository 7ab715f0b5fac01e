import { z } from "zod";
import { partialMatch } from "../partial-match.js";
import { JsonObject, ToolName } from "../primitives.js";
import { defineExpectationKind, show } from "./define.js";

/** The agent called a tool, optionally with arguments that include `args`. */
export const toolCalled = defineExpectationKind({
  name: "tool_called",
  readsToolCalls: true,
  args: z.strictObject({ name: ToolName, args: JsonObject.optional() }),
  namesTools: ({ name }) => [{ name, path: ["name"] }],
  check({ name, args }, facts) {
    const named = facts.toolCalls.filter((call) => call.name === name);
    const matching = named.filter(
      (call) => args === undefined || (call.arguments !== undefined && partialMatch(args, call.arguments)),
    );
    if (matching.length > 0) {
      return {
        holds: true,
        reason: `${name} was called${args ? ` with ${show(args)}` : ""}`,
        sequences: [matching[0]!.sequence],
      };
    }
    if (named.length > 0) {
      const seen = named.map((call) => call.arguments_raw).join("; ");
      return {
        holds: false,
        reason: `${name} was called, but not with ${show(args)}; it got: ${seen}`,
        sequences: named.map((c) => c.sequence),
      };
    }
    return { holds: false, reason: `${name} was not called`, sequences: [] };
  },
});
