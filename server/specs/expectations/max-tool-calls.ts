import { z } from "zod";
import { defineExpectationKind } from "./define.js";

/** At most this many tool calls. */
export const maxToolCalls = defineExpectationKind({
  name: "max_tool_calls",
  readsToolCalls: true,
  args: z.number().int().min(0).max(10_000),
  check(max, facts) {
    const count = facts.toolCalls.length;
    return {
      holds: count <= max,
      reason: `${count} tool call(s); at most ${max} allowed`,
      sequences: facts.toolCalls.map((c) => c.sequence),
    };
  },
});
