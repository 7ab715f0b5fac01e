import { z } from "zod";
import { compilePattern, patternError } from "../pattern.js";
import { OneOrMany } from "../primitives.js";
import { TEXT_LIMIT } from "../facts.js";
import { defineExpectationKind, show } from "./define.js";

const Pattern = z
  .string()
  .min(1)
  .max(2000)
  .superRefine((source, ctx) => {
    const problem = patternError(source);
    if (problem) ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${problem}` });
  })
  // Not JSON Schema's `regex` format (ECMA-262 as written): a leading (?i) is taken too. The document
  // names its own format, so that a validator that knows it can check a pattern as the service does.
  .meta({
    format: "ecmascript-pattern",
    description:
      "A regular expression in ECMAScript syntax (matched with the u flag), optionally led by inline flags such as (?i), (?m) or (?s)",
  });

const list = (value: string | string[] | undefined) =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * What the agent said, in every text of the check's scope (a turn, or the whole conversation):
 * its final answers and what it said before or between tool calls. `matches` and `contains`
 * hold if any text has them (so not when there is no text); `not_contains` fails if any text has
 * it (so it holds when there is none: a probe tripping on it trips on a silent agent too).
 */
export const response = defineExpectationKind({
  name: "response",
  args: z
    .strictObject({ matches: Pattern.optional(), contains: OneOrMany.optional(), not_contains: OneOrMany.optional() })
    .refine((r) => r.matches !== undefined || r.contains !== undefined || r.not_contains !== undefined, {
      message: "name at least one of matches, contains, not_contains",
    })
    .meta({ minProperties: 1 }),
  check({ matches, contains, not_contains }, facts) {
    const replies = facts.replies
      .filter((reply) => reply.content)
      .map((reply) => ({ sequence: reply.sequence, text: reply.content!.slice(0, TEXT_LIMIT) }));
    const problems: string[] = [];
    const offending = new Set<number>();
    const pattern = matches === undefined ? undefined : compilePattern(matches);
    const none = replies.length === 0 ? "the agent gave no text reply" : undefined;
    if (pattern && !replies.some(({ text }) => pattern.test(text))) {
      problems.push(none ?? `no reply matches /${matches}/`);
    }
    for (const needle of list(contains)) {
      if (!replies.some(({ text }) => text.includes(needle))) {
        problems.push(none ?? `no reply contains ${show(needle)}`);
      }
    }
    for (const needle of list(not_contains)) {
      const hits = replies.filter(({ text }) => text.includes(needle));
      if (hits.length > 0) {
        problems.push(`${hits.length} repl${hits.length === 1 ? "y contains" : "ies contain"} ${show(needle)}`);
      }
      for (const hit of hits) offending.add(hit.sequence);
    }
    // A text that should not be there is the evidence; otherwise every text that was read is.
    const sequences = offending.size > 0 ? [...offending] : replies.map((reply) => reply.sequence);
    const reasons = [...new Set(problems)];
    return reasons.length === 0
      ? {
          holds: true,
          reason: `every condition holds over ${replies.length} repl${replies.length === 1 ? "y" : "ies"}`,
          sequences,
        }
      : { holds: false, reason: reasons.join("; "), sequences };
  },
});
