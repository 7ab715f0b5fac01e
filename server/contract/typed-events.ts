import { z } from "zod";

/** `release_decision.updated` → `ReleaseDecisionUpdatedEvent`: a type's component name. */
export const eventComponentName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}Event`;

const componentRef = (name: string) => `#/components/schemas/${name}`;

/**
 * An event envelope as the document gives it: the envelope's fields as before, and `oneOf` the
 * events it may be, told apart by `type` (an OpenAPI discriminator): one schema per type, `type`
 * that type and `data` its schema; and one for a type added later, which a consumer ignores.
 * The envelope keeps its own properties (not an `allOf`), so the document only gained precision.
 */
export function typedEnvelope<Envelope extends z.ZodObject>(
  name: string,
  envelope: Envelope,
  data: Record<string, z.ZodType>,
  description: string,
) {
  const types = Object.keys(data);
  for (const type of types) {
    z.object({ type: z.literal(type), data: data[type]! }).meta({
      id: eventComponentName(type),
      description: `The \`${type}\` event: its \`data\``,
    });
  }
  z.object({
    type: z
      .string()
      .meta({ not: { enum: types } })
      .describe("A type added after this version of the document: ignore it"),
    data: z.record(z.string(), z.unknown()),
  }).meta({ id: `Other${name}`, description: "An event of a type added after this version of the document" });
  return envelope.meta({
    id: name,
    description: `${description} Told apart by \`type\`; ignore types you do not know.`,
    discriminator: {
      propertyName: "type",
      mapping: Object.fromEntries(types.map((type) => [type, componentRef(eventComponentName(type))])),
    },
    oneOf: [
      ...types.map((type) => ({ $ref: componentRef(eventComponentName(type)) })),
      { $ref: componentRef(`Other${name}`) },
    ],
  });
}
