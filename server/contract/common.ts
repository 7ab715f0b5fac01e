import { z } from "zod";

export const Timestamp = z.string().describe("ISO 8601 UTC timestamp, millisecond precision");

/** A path-parameter id: any short string; an unknown or malformed id is simply not found (404). */
export const ResourceId = z.string().min(1).max(128);

/** Tokens as an answer reported them: a count it did not report is null (unknown, not zero). */
export const TokenUsage = z.object({
  input_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  total_tokens: z.number().int(),
});

export const PageLimit = z.coerce
  .number({ error: "limit must be an integer from 1 to 200" })
  .int("limit must be an integer from 1 to 200")
  .min(1, "limit must be at least 1")
  .max(200, "limit must be at most 200")
  .default(50)
  .describe("Page size: 1 to 200, default 50");

export const PageCursor = z
  .string()
  .min(1)
  .max(2048)
  .describe("Opaque cursor from a previous page's next_cursor; bound to the filters it was issued with");

export const PageQuery = z.strictObject({
  limit: PageLimit,
  cursor: PageCursor.optional(),
});

/** The project a resource is created in: a key bound to one project may leave it out. */
export const OwningProject = ResourceId.optional().describe("May be omitted with a key bound to one project");

export const ProjectScopedPageQuery = PageQuery.extend({
  project_id: ResourceId.optional().describe("Filter by project (admin keys); a project key sees its own project"),
});

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe("Pass as `cursor` to get the next page; null on the last page"),
    has_more: z.boolean(),
  });
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}

export const SCHEMA_OF = "x-schema-of";

/**
 * A response value the document gives by a component's schema, where zod keeps it open (a stored
 * spec is a document as the spec format takes it, checked when it was stored, and read back as is).
 */
export function schemaOf<T extends z.ZodType>(schema: T, component: string): T {
  return schema.meta({ [SCHEMA_OF]: component }) as T;
}

/**
 * An enum of a response that may gain values (a new evaluation kind, agent protocol, failure
 * cause): the OpenAPI document gives it as a string with today's values in `x-extensible-enum`,
 * so that a generated client accepts the values added later. Requests still accept only these.
 */
export function extensible<T extends z.ZodEnum>(values: T): T {
  return values.meta({ extensible: true }) as T;
}

/**
 * A query filter that takes an enum's values in any case (`failed` = `FAILED`). The document lists
 * the upper- and lower-case spellings, which are what a client sends.
 */
export function caseInsensitive<T extends z.ZodEnum<Readonly<Record<string, string>>>>(values: T) {
  const names = values.options as string[];
  return z
    .string()
    .meta({ enum: [...names, ...names.map((name) => name.toLowerCase())] })
    .transform((value) => value.toUpperCase())
    .pipe(values);
}

/** Arrays whose items are each listed once: the document says `uniqueItems`, as the check does. */
export function uniqueItems<T extends z.ZodArray>(array: T, message: string) {
  return array
    .refine((items) => new Set(items.map((item) => JSON.stringify(item))).size === items.length, message)
    .meta({ uniqueItems: true });
}

/** A GitHub repository's `owner/name`. */
export const RepositoryName = z.string().regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, "use owner/name");
export const CommitSha = z.string().regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/, "a full lower-case hex commit SHA");

export const Name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "use letters, digits, '.', '_' and '-', starting with a letter or digit");
