import type { z } from "zod";

const componentRef = (name: string) => `#/components/schemas/${name}`;

/** One shape an object may take: its component, the values of the discriminating property it has, its schema. */
export interface Variant {
  id: string;
  values: readonly string[];
  schema: z.ZodObject;
  description: string;
}

/**
 * An object as the document gives it when its shape depends on one property (an event's `type`,
 * a message's `role`): its own properties as they are, and `oneOf` its shapes, told apart by that
 * property (an OpenAPI `discriminator`), each a component. The object keeps its properties rather
 * than becoming an `allOf`, so a document that gains the shapes only gains precision; the zod
 * schema stays the open object, as what the service sends is not checked against the document.
 */
export function oneOfBy<Base extends z.ZodObject>(
  base: Base,
  { id, description, propertyName }: { id: string; description: string; propertyName: string },
  variants: readonly Variant[],
  /** For values added later, which no mapping names. */
  other?: Omit<Variant, "values">,
): Base {
  for (const variant of [...variants, ...(other ? [other] : [])]) {
    variant.schema.meta({ id: variant.id, description: variant.description });
  }
  return base.meta({
    id,
    description,
    discriminator: {
      propertyName,
      mapping: Object.fromEntries(
        variants.flatMap((variant) => variant.values.map((value) => [value, componentRef(variant.id)])),
      ),
    },
    oneOf: [...variants, ...(other ? [other] : [])].map((variant) => ({ $ref: componentRef(variant.id) })),
  });
}
