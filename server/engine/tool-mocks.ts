import type { Tool } from "../contract/index.js";
import { partialMatch } from "../specs/partial-match.js";
import { setAtPath } from "../specs/result-path.js";

export interface Injection {
  tool: string;
  field: string;
  text: string;
}

export interface ToolAnswer {
  result: unknown;
  /** How the answer was found: a `when` entry (its index), the default, or why there is none. */
  source:
    | { kind: "when"; index: number }
    | { kind: "default"; index: number }
    | { kind: "no_mock" | "unknown_tool" | "invalid_arguments" };
  injected: boolean;
}

/**
 * Plays the tool side from the spec: the first `mock` entry whose `when` partially matches the
 * arguments answers; an entry without `when` is the default. Unknown tools and arguments that
 * do not parse get an error result, which the agent sees like any tool error.
 */
export function answerToolCall(
  tools: readonly Tool[],
  name: string,
  args: Record<string, unknown> | undefined,
  injection?: Injection,
): ToolAnswer {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) return { result: { error: `unknown tool '${name}'` }, source: { kind: "unknown_tool" }, injected: false };
  if (args === undefined) {
    return {
      result: { error: "arguments are not a JSON object" },
      source: { kind: "invalid_arguments" },
      injected: false,
    };
  }
  const mocks = tool.mock ?? [];
  const index = mocks.findIndex((mock) => mock.when !== undefined && partialMatch(mock.when, args));
  const fallback = mocks.findIndex((mock) => mock.when === undefined);
  const chosen = index >= 0 ? index : fallback;
  if (chosen < 0) {
    return {
      result: { error: `no mock of '${name}' matches these arguments` },
      source: { kind: "no_mock" },
      injected: false,
    };
  }

  const result: unknown = structuredClone(mocks[chosen]!.return);
  const inject = injection?.tool === name && setAtPath(result, injection.field, injection.text);
  return { result, source: { kind: index >= 0 ? "when" : "default", index: chosen }, injected: inject };
}
