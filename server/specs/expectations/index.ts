import { z } from "zod";
import type { CheckOutcome, ConversationFacts } from "../facts.js";
import { canaryLeaked } from "./canary-leaked.js";
import type { ExpectationKind } from "./define.js";
import { latencyMs } from "./latency-ms.js";
import { maxToolCalls } from "./max-tool-calls.js";
import { outsideImage } from "./outside-image.js";
import { response } from "./response.js";
import { sqlInjected } from "./sql-injected.js";
import { stepsExhausted } from "./steps-exhausted.js";
import { toolCalled } from "./tool-called.js";
import { toolNotCalled } from "./tool-not-called.js";
import { toolSequence } from "./tool-sequence.js";
import { unsafeMarkup } from "./unsafe-markup.js";
import { valueLeaked } from "./value-leaked.js";

/** Every kind of expectation the spec format knows, in the order the docs list them. */
export const EXPECTATION_KINDS = [
  toolCalled,
  toolNotCalled,
  response,
  toolSequence,
  maxToolCalls,
  latencyMs,
  canaryLeaked,
  valueLeaked,
  outsideImage,
  unsafeMarkup,
  sqlInjected,
  stepsExhausted,
] as const;

type Kind = (typeof EXPECTATION_KINDS)[number];
export type ExpectationKindName = Kind["name"];
type ExpectationShape = { [K in Kind as K["name"]]: z.ZodOptional<K["args"]> };

const BY_NAME = new Map<string, ExpectationKind>(
  EXPECTATION_KINDS.map((kind) => [kind.name, kind as unknown as ExpectationKind]),
);

/** One expectation: exactly one kind per entry, written as `- <kind>: <arguments>`. */
export const Expectation = z
  .strictObject(
    Object.fromEntries(EXPECTATION_KINDS.map((kind) => [kind.name, kind.args.optional()])) as ExpectationShape,
  )
  .refine((entry) => Object.keys(entry).length === 1, {
    message: `each expectation names exactly one of: ${[...BY_NAME.keys()].join(", ")}`,
  })
  .meta({ id: "Expectation", minProperties: 1, maxProperties: 1 });
export type Expectation = z.infer<typeof Expectation>;

/** The kind of an expectation entry and its arguments; undefined unless it names exactly one known kind. */
export function argumentsOf(expectation: Expectation): { kind: ExpectationKind; args: unknown } | undefined {
  const names = Object.keys(expectation);
  const kind = names.length === 1 ? BY_NAME.get(names[0]!) : undefined;
  return kind && { kind, args: (expectation as Record<string, unknown>)[kind.name] };
}

/** Checks one (valid) expectation against the facts of a conversation, or of one turn of it. */
export function checkExpectation(
  expectation: Expectation,
  facts: ConversationFacts,
): CheckOutcome & { kind: ExpectationKindName } {
  const found = argumentsOf(expectation);
  if (!found) throw new Error(`Not a valid expectation: ${JSON.stringify(expectation)}`);
  const kind = found.kind.name as ExpectationKindName;
  if (found.kind.readsToolCalls && !facts.toolCallsKnown) {
    return {
      holds: false,
      inconclusive: true,
      reason:
        "not judged: the agent runs its own tools and reported no tool call (neither in its traces nor in its answers); no evidence is not evidence of no call",
      sequences: [],
      kind,
    };
  }
  return { ...found.kind.check(found.args, facts), kind };
}
