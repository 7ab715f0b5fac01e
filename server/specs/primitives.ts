import { z } from "zod";

/** Building blocks of the spec format, shared by the document and its expectation kinds. */

export const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "tool names use letters, digits, '_' and '-' (at most 64)");
export const LocalId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
    "ids use letters, digits, '.', '_' and '-', starting with a letter or digit",
  );
export const Text = z.string().min(1).max(100_000);
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Any JSON value. Named, and recursive through its own name, so documents can `$ref` it. */
export const JsonValue: z.ZodType<JsonValue> = z
  .lazy(() =>
    z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
  )
  .meta({ id: "JsonValue" });
export const JsonObject = z.record(z.string(), JsonValue);

/**
 * A JSON value the service read off the wire and recorded (a tool's arguments or result, an
 * artifact's data): published as `JsonValue`, typed `unknown` for the code that narrows it.
 */
export const RecordedJson = JsonValue as z.ZodType<unknown>;
export const RecordedJsonObject = z.record(z.string(), RecordedJson);
export const Fraction = z.number().min(0).max(1);
export const OneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(100)]);
