import type { z } from "zod";
import type { CheckOutcome, ConversationFacts } from "../facts.js";

/** A tool an expectation names, and where in its arguments: the spec must define it under `tools`. */
export interface NamedTool {
  name: string;
  path: (string | number)[];
}

/**
 * One kind of expectation, written in a spec as `- <name>: <arguments>`: what its arguments
 * look like and what it means. Adding a kind is a file that defines one, and a line in
 * `index.ts`; the spec format, its JSON Schema, validation and evaluation follow from it.
 */
export interface ExpectationKind<Name extends string = string, Args extends z.ZodType = z.ZodType> {
  name: Name;
  args: Args;
  /** The tools its arguments name. */
  namesTools?: (args: z.output<Args>) => NamedTool[];
  /** Whether it only makes sense in a security probe that plants a canary. */
  needsCanary?: boolean;
  /** Whether it holds when the agent did something wrong (a detector): then it belongs in a probe's `fail_if` only. */
  detects?: boolean;
  /** Whether it reads the agent's tool calls: inconclusive when they are not known (`facts.toolCallsKnown`). */
  readsToolCalls?: boolean;
  check(args: z.output<Args>, facts: ConversationFacts): CheckOutcome;
}

export function defineExpectationKind<const Name extends string, Args extends z.ZodType>(
  kind: ExpectationKind<Name, Args>,
): ExpectationKind<Name, Args> {
  return kind;
}

export const show = (value: unknown) => JSON.stringify(value);
