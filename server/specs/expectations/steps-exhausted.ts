import { z } from "zod";
import { defineExpectationKind } from "./define.js";

/**
 * A turn ended because the agent used all of its `max_steps` and still called tools: a loop, or
 * consumption without bound. An agent that runs its own tools loops within one step, where
 * `max_steps` does not count: that is not judged (pair it with `max_tool_calls`).
 */
export const stepsExhausted = defineExpectationKind({
  name: "steps_exhausted",
  args: z.literal(true),
  detects: true,
  check(_args, facts) {
    const limits = facts.stepLimits;
    if (limits.length > 0) {
      return {
        holds: true,
        reason: limits
          .map((limit) => `turn ${limit.turn} used all ${limit.max_steps} steps and still called tools`)
          .join("; "),
        sequences: limits.map((limit) => limit.sequence),
      };
    }
    if (facts.toolsRunBy === "agent") {
      return {
        holds: false,
        inconclusive: true,
        reason:
          "not judged: the agent runs its own tools, so its loop is not counted in steps (max_tool_calls bounds its reported calls)",
        sequences: [],
      };
    }
    return { holds: false, reason: "every turn ended within its step limit", sequences: [] };
  },
});
