import { z } from "zod";
import { SCHEMA_OF } from "../contract/index.js";

interface OverrideContext {
  zodSchema: unknown;
  jsonSchema: Record<string, unknown>;
}

/**
 * How the contract's zod schemas read as the JSON Schemas we publish (the OpenAPI document, the
 * events schema). Response objects allow properties they do not list, so clients keep working as
 * fields are added; request objects stay strict (they are `strictObject`s, which keep theirs). An
 * enum marked `extensible` is a string with its values today in `x-extensible-enum`. A value
 * marked with `schemaOf` is given by that component.
 */
export function publishedJsonSchema({ zodSchema, jsonSchema }: OverrideContext): void {
  const def = (zodSchema as { _zod?: { def?: { type?: string; catchall?: unknown } } })._zod?.def;
  if (def?.type === "object" && def.catchall === undefined && jsonSchema.additionalProperties === false) {
    delete jsonSchema.additionalProperties;
  }
  // A value given by a component's schema while zod keeps it open (e.g. a stored spec document),
  // as an allOf beside what zod says of it (a diff reads a bare $ref as those words removed).
  if (typeof jsonSchema[SCHEMA_OF] === "string") {
    jsonSchema.allOf = [{ $ref: `#/components/schemas/${jsonSchema[SCHEMA_OF] as string}` }];
    delete jsonSchema[SCHEMA_OF];
  }
  if (jsonSchema.extensible === true) {
    delete jsonSchema.extensible;
    if (Array.isArray(jsonSchema.enum)) {
      jsonSchema["x-extensible-enum"] = jsonSchema.enum;
      delete jsonSchema.enum;
    }
  }
}

/** A zod schema as a published JSON Schema (2020-12). */
export function toPublishedJsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, { io, unrepresentable: "any", override: publishedJsonSchema }) as Record<
    string,
    unknown
  >;
}
