import fc from "fast-check";

/** A JSON Schema (2020-12, as OpenAPI 3.1 documents hold them): only the keywords read here are typed. */
export type JsonSchema = boolean | SchemaObject;
interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  not?: JsonSchema;
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema;
  propertyNames?: JsonSchema;
  minProperties?: number;
  maxProperties?: number;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  contentMediaType?: string;
  contentSchema?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  [keyword: string]: unknown;
}

export interface SchemaArbitraryOptions {
  /** The components `#/components/schemas/<name>` refers to. */
  components: Record<string, JsonSchema>;
  /** Values a string named so should often take (the ids of real resources). */
  known?: (name: string) => readonly string[] | undefined;
  /** Strings of a format the schema names (beyond date-time, uri, email, uuid and regex). */
  formats?: Record<string, fc.Arbitrary<string>>;
  /** Nesting below which only what is required is generated (recursive schemas end there). */
  maxDepth?: number;
  /** How a string whose `contentSchema` describes its parsed content is written (default: as JSON). */
  serialize?: (value: unknown, mediaType: string | undefined) => string;
}

const BUILT_IN_FORMATS: Record<string, fc.Arbitrary<string>> = {
  "date-time": fc
    .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
    .map((date) => date.toISOString()),
  uri: fc.webUrl({ validSchemes: ["http", "https"] }),
  email: fc.emailAddress(),
  uuid: fc.uuid(),
  regex: fc.constantFrom("^a", "refund", "[0-9]+", "a|b", "\\d{2,4}", "^(yes|no)$"),
};

/** Drops the `$ref` of a schema for what it names (siblings kept: 3.1 allows annotations beside it). */
function resolve(schema: SchemaObject, components: Record<string, JsonSchema>): SchemaObject {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined; hops++) {
    if (hops > 50) throw new Error(`A $ref cycle at ${schema.$ref}`);
    const name = current.$ref.replace(/^#\/components\/schemas\//, "");
    const target = components[name];
    if (target === undefined) throw new Error(`Unresolved $ref ${current.$ref}`);
    const { $ref: _ref, ...siblings } = current;
    current = { ...(typeof target === "boolean" ? {} : target), ...siblings };
  }
  return current;
}

/** Two schemas as one: the second's keywords win, properties (each merged too) and required joined. */
function both(first: SchemaObject, second: SchemaObject, components: Record<string, JsonSchema>): SchemaObject {
  const properties: Record<string, JsonSchema> = { ...first.properties };
  for (const [name, schema] of Object.entries(second.properties ?? {})) {
    const before = properties[name];
    properties[name] =
      schema === true && before !== undefined
        ? before
        : typeof before === "object" && typeof schema === "object"
          ? both(resolve(before, components), schema, components)
          : schema;
  }
  return {
    ...first,
    ...second,
    ...(first.properties || second.properties ? { properties } : {}),
    ...(first.required || second.required
      ? { required: [...new Set([...(first.required ?? []), ...(second.required ?? [])])] }
      : {}),
  };
}

/** `allOf` folded into one schema. */
function merged(schema: SchemaObject, components: Record<string, JsonSchema>): SchemaObject {
  if (!schema.allOf) return schema;
  const { allOf, ...base } = schema;
  return allOf.reduce<SchemaObject>(
    (into, part) =>
      typeof part === "boolean" ? into : both(into, merged(resolve(part, components), components), components),
    base,
  );
}

/** A schema's choices (`anyOf` / `oneOf`), each with the keywords beside them. */
function choices(schema: SchemaObject, components: Record<string, JsonSchema>): SchemaObject[] | undefined {
  const list = schema.oneOf ?? schema.anyOf;
  if (!list) return undefined;
  const { oneOf: _oneOf, anyOf: _anyOf, ...base } = schema;
  return list.map((choice) =>
    typeof choice === "boolean" ? base : both(base, resolve(choice, components), components),
  );
}

const isScalar = (schema: JsonSchema) =>
  typeof schema !== "boolean" &&
  schema.$ref === undefined &&
  schema.type !== undefined &&
  !["object", "array"].includes(String(schema.type));

function stringOf(schema: SchemaObject, options: SchemaArbitraryOptions, name: string | undefined) {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? Math.max(minLength + 40, 40);
  const fits = (value: string) => {
    const length = [...value].length;
    return length >= minLength && length <= maxLength;
  };
  const known = name === undefined ? undefined : options.known?.(name)?.filter(fits);
  let generated: fc.Arbitrary<string>;
  const format =
    schema.format === undefined ? undefined : (options.formats?.[schema.format] ?? BUILT_IN_FORMATS[schema.format]);
  if (format) {
    const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, "u");
    generated = pattern ? format.filter((value) => pattern.test(value)) : format;
  } else if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern, "u");
    try {
      generated = fc.stringMatching(pattern);
    } catch {
      // A pattern fast-check cannot generate from (a lookahead): strings filtered by it.
      generated = fc.string({ unit: "grapheme-ascii", minLength, maxLength }).filter((value) => pattern.test(value));
    }
  } else {
    generated = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.string({ unit: "grapheme-ascii", minLength, maxLength: Math.min(maxLength, minLength + 40) }),
      },
      {
        weight: 1,
        arbitrary: fc.string({ unit: "grapheme", minLength, maxLength: Math.min(maxLength, minLength + 20) }),
      },
    );
  }
  generated = generated.filter(fits);
  return known && known.length > 0
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated })
    : generated;
}

function numberOf(schema: SchemaObject, integer: boolean): fc.Arbitrary<number> {
  const bound = integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE;
  let min = schema.minimum ?? schema.exclusiveMinimum ?? -bound;
  let max = schema.maximum ?? schema.exclusiveMaximum ?? bound;
  if (integer) {
    min = Math.ceil(schema.exclusiveMinimum !== undefined && schema.minimum === undefined ? min + 1e-9 : min);
    max = Math.floor(schema.exclusiveMaximum !== undefined && schema.maximum === undefined ? max - 1e-9 : max);
    const small = fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) });
    const any = fc.integer({ min: Math.max(min, -0x7fffffff), max: Math.min(max, 0x7fffffff) });
    const whole = min <= 1000 && max >= -1000 ? fc.oneof({ weight: 3, arbitrary: small }, any) : any;
    return schema.multipleOf
      ? whole.map((n) => n - (n % schema.multipleOf!)).filter((n) => n >= min && n <= max)
      : whole;
  }
  return fc.double({
    min,
    max,
    minExcluded: schema.exclusiveMinimum !== undefined && schema.minimum === undefined,
    maxExcluded: schema.exclusiveMaximum !== undefined && schema.maximum === undefined,
    noNaN: true,
    noDefaultInfinity: true,
  });
}

/**
 * Values a JSON Schema describes, as fast-check arbitraries: types, `const` and `enum`, `$ref`
 * to components, `allOf` / `anyOf` / `oneOf`, string lengths, patterns and formats, number
 * bounds, array lengths and `uniqueItems`, objects' required and optional properties, maps
 * (`additionalProperties`, `propertyNames`) and their sizes. What it cannot aim at (`not`,
 * `if`/`then`, a `oneOf` whose choices overlap) the caller checks with a validator.
 */
export function schemaArbitrary(
  raw: JsonSchema,
  options: SchemaArbitraryOptions,
  name?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (raw === true) return fc.jsonValue({ maxDepth: 2 });
  if (raw === false) throw new Error("A schema that nothing matches");
  const schema = merged(resolve(raw, options.components), options.components);
  const deep = depth >= (options.maxDepth ?? 6);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const list = choices(schema, options.components);
  if (list) {
    const usable = deep && list.some(isScalar) ? list.filter(isScalar) : list;
    return fc.oneof(...usable.map((choice) => schemaArbitrary(choice, options, name, depth + 1)));
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length > 1) {
    return fc.oneof(...types.map((type) => schemaArbitrary({ ...schema, type }, options, name, depth)));
  }
  switch (types[0]) {
    case "string":
      if (schema.contentSchema !== undefined) {
        const serialize = options.serialize ?? ((value: unknown) => JSON.stringify(value));
        return schemaArbitrary(schema.contentSchema, options, name, depth).map((value) =>
          serialize(value, schema.contentMediaType),
        );
      }
      return stringOf(schema, options, name);
    case "integer":
      return numberOf(schema, true);
    case "number":
      return numberOf(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = schema.minItems ?? 0;
      const maxLength = deep ? minLength : Math.min(schema.maxItems ?? minLength + 3, minLength + 3);
      const item =
        schema.items === undefined
          ? fc.jsonValue({ maxDepth: 1 })
          : schemaArbitrary(schema.items, options, name, depth + 1);
      if (schema.prefixItems) {
        return fc.tuple(...schema.prefixItems.map((part) => schemaArbitrary(part, options, name, depth + 1)));
      }
      return schema.uniqueItems
        ? fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
        : fc.array(item, { minLength, maxLength });
    }
    case "object":
    case undefined: {
      if (types[0] === undefined && schema.properties === undefined && schema.additionalProperties === undefined) {
        return fc.jsonValue({ maxDepth: deep ? 0 : 2 });
      }
      const required = new Set(schema.required ?? []);
      const minProperties = schema.minProperties ?? 0;
      // Deep down only what is required, unless that is too few properties.
      const onlyRequired = deep && minProperties <= required.size;
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {})
          .filter(([property, propertySchema]) => propertySchema !== false && (!onlyRequired || required.has(property)))
          .map(([property, propertySchema]) => [
            property,
            schemaArbitrary(propertySchema, options, property, depth + 1),
          ]),
      );
      const record = fc.record(properties, { requiredKeys: [...required].filter((key) => key in properties) });
      const extra = schema.additionalProperties;
      if (extra !== undefined && extra !== false && Object.keys(properties).length === 0) {
        const keys =
          schema.propertyNames === undefined
            ? fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 20 })
            : (schemaArbitrary(schema.propertyNames, options, undefined, depth + 1) as fc.Arbitrary<string>);
        return fc.dictionary(keys, schemaArbitrary(extra, options, undefined, depth + 1), {
          minKeys: minProperties,
          maxKeys: deep ? minProperties : Math.min(schema.maxProperties ?? minProperties + 3, minProperties + 3),
          noNullPrototype: true,
        });
      }
      if (schema.maxProperties !== undefined && required.size === 0) {
        // A few of the properties, as many as it takes (an entry that names exactly one kind, say).
        return fc
          .subarray(Object.keys(properties), { minLength: minProperties, maxLength: schema.maxProperties })
          .chain((names) => fc.record(Object.fromEntries(names.map((name) => [name, properties[name]!]))));
      }
      return minProperties > 0 ? record.filter((value) => Object.keys(value).length >= minProperties) : record;
    }
    default:
      throw new Error(`A schema of type ${String(types[0])}`);
  }
}
