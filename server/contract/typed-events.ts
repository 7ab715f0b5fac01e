import { z } from "zod";
import { oneOfBy } from "./one-of.js";

/** `release_decision.updated` → `ReleaseDecisionUpdatedEvent`: a type's component name. */
export const eventComponentName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}Event`;

/**
 * An event envelope as the document gives it: the envelope's fields as before, and `oneOf` the
 * events it may be, told apart by `type`: one schema per type, `type` that type and `data` its
 * schema; and one for a type added later (any other `type`), which a consumer ignores.
 */
export function typedEnvelope<Envelope extends z.ZodObject>(
  name: string,
  envelope: Envelope,
  data: Record<string, z.ZodType>,
  description: string,
) {
  const types = Object.keys(data);
  return oneOfBy(
    envelope,
    {
      id: name,
      description: `${description} Told apart by \`type\`; ignore types you do not know.`,
      propertyName: "type",
    },
    types.map((type) => ({
      id: eventComponentName(type),
      values: [type],
      schema: z.object({ type: z.literal(type), data: data[type]! }),
      description: `The \`${type}\` event: its \`data\``,
    })),
    {
      id: `Other${name}`,
      schema: z.object({
        type: z
          .string()
          .meta({ not: { enum: types } })
          .describe("A type added after this version of the document: ignore it"),
        data: z.record(z.string(), z.unknown()),
      }),
      description: "An event of a type added after this version of the document",
    },
  );
}
