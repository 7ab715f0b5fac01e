import { closest, distance } from "fastest-levenshtein";
import type { z } from "zod";
import { parseSpecPath } from "../../server/specs/read-yaml.js";

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
};
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema a value is checked by once wrappers (optional, default, pipe…) are taken off. */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let depth = 0; depth < 50; depth++) {
    const def = defOf(schema);
    const inner =
      def.innerType ?? (def.type === "pipe" ? def.in : undefined) ?? (def.type === "lazy" ? def.getter?.() : undefined);
    if (!inner) return schema;
    schema = inner;
  }
  return schema;
}

/** The object schemas a value at this level may be (one, or a union's). */
function objectsOf(schema: z.ZodType): Record<string, z.ZodType>[] {
  const def = defOf(unwrap(schema));
  if (def.type === "object" && def.shape) return [def.shape];
  if (def.type === "union") return (def.options ?? []).flatMap(objectsOf);
  return [];
}

/** The keys an object at `path` may have, by the schema; empty when the path leads to no object. */
export function knownKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let at: z.ZodType[] = [schema];
  for (const part of path) {
    at = at.flatMap((candidate) => {
      const def = defOf(unwrap(candidate));
      if (typeof part === "number") return def.type === "array" && def.element ? [def.element] : [];
      if (def.type === "record" && def.valueType) return [def.valueType];
      return objectsOf(candidate).flatMap((shape) => (shape[part] ? [shape[part]] : []));
    });
    if (at.length === 0) return [];
  }
  return [...new Set(at.flatMap((candidate) => objectsOf(candidate).flatMap(Object.keys)))];
}

/** The known key an unknown one was probably meant to be: the nearest by edit distance, if it is near enough. */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const nearest = closest(unknown, [...known]);
  return distance(unknown, nearest) <= Math.max(2, Math.floor(unknown.length / 3)) ? nearest : undefined;
}

const UNKNOWN_KEY = /^Unrecognized keys?: "([^"]+)"/;

/**
 * A problem's message with a suggestion when it is about an unknown key (`path` ends with the key):
 * `Unrecognized key: "tool_caled" — did you mean tool_called?`.
 */
export function withSuggestion(schema: z.ZodType, problem: { path: string; message: string }): string {
  const unknown = UNKNOWN_KEY.exec(problem.message)?.[1];
  if (!unknown) return problem.message;
  const parent = parseSpecPath(problem.path);
  if (parent.at(-1) === unknown) parent.pop();
  const suggestion = suggestKey(unknown, knownKeysAt(schema, parent));
  return suggestion ? `${problem.message} — did you mean ${suggestion}?` : problem.message;
}

/**
 * A file's problem as `validate` and `test` print it: an unknown key at its own line (the schema
 * reports the object that holds it) and with the key it was probably meant to be.
 */
export function explainProblem<P extends { path: string; message: string; line: number }>(
  schema: z.ZodType,
  problem: P,
  lineOf: ((path: readonly PropertyKey[]) => number | undefined) | undefined,
): P {
  if (!UNKNOWN_KEY.test(problem.message)) return problem;
  return {
    ...problem,
    line: lineOf?.(parseSpecPath(problem.path)) ?? problem.line,
    message: withSuggestion(schema, problem),
  };
}
