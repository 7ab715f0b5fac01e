import { z } from "zod";
import { ToolName } from "../primitives.js";
import { defineExpectationKind } from "./define.js";

/** The agent never called a tool: `tool_not_called: delete_account`. */
export const toolNotCalled = defineExpectationKind({
  name: "tool_not_called",
  readsToolCalls: true,
  args: z.union([ToolName, z.strictObject({ name: ToolName })]),
  namesTools: (args) => (typeof args === "string" ? [{ name: args, path: [] }] : [{ name: args.name, path: ["name"] }]),
  check(args, facts) {
    const name = typeof args === "string" ? args : args.name;
    const calls = facts.toolCalls.filter((call) => call.name === name);
    return calls.length === 0
      ? { holds: true, reason: `${name} was not called`, sequences: [] }
      : { holds: false, reason: `${name} was called ${calls.length} time(s)`, sequences: calls.map((c) => c.sequence) };
  },
});
