import { z } from "zod";
import { ToolName } from "../primitives.js";
import { defineExpectationKind } from "./define.js";

function isSubsequence(wanted: readonly string[], seen: readonly string[]): boolean {
  let next = 0;
  for (const name of seen) if (name === wanted[next]) next++;
  return next === wanted.length;
}

function containsAll(seen: readonly string[], wanted: readonly string[]): boolean {
  const remaining = [...seen];
  return wanted.every((name) => {
    const at = remaining.indexOf(name);
    if (at < 0) return false;
    remaining.splice(at, 1);
    return true;
  });
}

/** The order of the agent's tool calls: `in_order` (others may come between), `exact`, or `any_order`. */
export const toolSequence = defineExpectationKind({
  name: "tool_sequence",
  readsToolCalls: true,
  args: z.strictObject({
    tools: z.array(ToolName).min(1).max(100),
    mode: z.enum(["in_order", "exact", "any_order"]).default("in_order"),
  }),
  namesTools: ({ tools }) => tools.map((name, i) => ({ name, path: ["tools", i] })),
  check({ tools, mode }, facts) {
    const names = facts.toolCalls.map((call) => call.name);
    const holds =
      mode === "exact"
        ? names.length === tools.length && names.every((name, i) => name === tools[i])
        : mode === "in_order"
          ? isSubsequence(tools, names)
          : containsAll(names, tools);
    return {
      holds,
      reason: `calls were [${names.join(", ")}]; expected ${mode.replace("_", " ")} [${tools.join(", ")}]`,
      sequences: facts.toolCalls.map((c) => c.sequence),
    };
  },
});
