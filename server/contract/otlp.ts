import { z } from "zod";

/**
 * OTLP/JSON's `ExportTraceServiceRequest` (opentelemetry-proto, `collector/trace/v1`), as the
 * OTLP specification maps the protobuf messages to JSON: field names in lowerCamelCase, trace and
 * span ids as hex, 64-bit integers as decimal strings (numbers are read too), enums as integers.
 * Every field is optional, as in proto3, and fields this version does not name are ignored: the
 * service reads the spans' ids, names, times and attributes.
 */

const Uint64 = z
  .union([z.string().regex(/^\d+$/), z.number().int().min(0)])
  .describe("A 64-bit unsigned integer: decimal text, or a JSON number");
const Int64 = z
  .union([z.string().regex(/^-?\d+$/), z.number().int()])
  .describe("A 64-bit integer: decimal text, or a JSON number");
const Count = z.number().int().min(0);

const hexId = (bytes: number, what: string) =>
  z
    .string()
    .regex(new RegExp(`^(?:[0-9a-fA-F]{${bytes * 2}})?$`))
    .describe(`${what}: ${bytes} bytes as ${bytes * 2} hex digits`);

interface AnyValue {
  stringValue?: string | undefined;
  boolValue?: boolean | undefined;
  intValue?: string | number | undefined;
  doubleValue?: number | undefined;
  arrayValue?: { values?: AnyValue[] | undefined } | undefined;
  kvlistValue?: { values?: KeyValue[] | undefined } | undefined;
  bytesValue?: string | undefined;
}
interface KeyValue {
  key?: string | undefined;
  value?: AnyValue | undefined;
}

export const OtlpAnyValue: z.ZodType<AnyValue> = z
  .lazy(() =>
    z.object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: Int64.optional(),
      doubleValue: z.number().optional(),
      arrayValue: z.object({ values: z.array(OtlpAnyValue).optional() }).optional(),
      kvlistValue: z.object({ values: z.array(OtlpKeyValue).optional() }).optional(),
      bytesValue: z.string().optional().describe("base64"),
    }),
  )
  .meta({ id: "OtlpAnyValue", description: "An attribute's value: one of its fields set" });

export const OtlpKeyValue: z.ZodType<KeyValue> = z
  .lazy(() => z.object({ key: z.string().optional(), value: OtlpAnyValue.optional() }))
  .meta({ id: "OtlpKeyValue" });

const Attributes = { attributes: z.array(OtlpKeyValue).optional(), droppedAttributesCount: Count.optional() };

const OtlpSpan = z
  .object({
    traceId: hexId(16, "The trace id").optional(),
    spanId: hexId(8, "The span id").optional(),
    traceState: z.string().optional(),
    parentSpanId: hexId(8, "The parent span's id; empty for a root span").optional(),
    flags: z.number().int().min(0).optional(),
    name: z.string().optional(),
    kind: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer"),
    startTimeUnixNano: Uint64.optional(),
    endTimeUnixNano: Uint64.optional(),
    ...Attributes,
    events: z
      .array(z.object({ timeUnixNano: Uint64.optional(), name: z.string().optional(), ...Attributes }))
      .optional(),
    droppedEventsCount: Count.optional(),
    links: z
      .array(
        z.object({
          traceId: hexId(16, "The linked trace's id").optional(),
          spanId: hexId(8, "The linked span's id").optional(),
          traceState: z.string().optional(),
          flags: z.number().int().min(0).optional(),
          ...Attributes,
        }),
      )
      .optional(),
    droppedLinksCount: Count.optional(),
    status: z
      .object({
        message: z.string().optional(),
        code: z.number().int().min(0).optional().describe("0 unset, 1 ok, 2 error"),
      })
      .optional(),
  })
  .meta({ id: "OtlpSpan" });

export const OtlpExportTraceServiceRequest = z
  .object({
    resourceSpans: z
      .array(
        z.object({
          resource: z.object(Attributes).optional(),
          scopeSpans: z
            .array(
              z.object({
                scope: z
                  .object({ name: z.string().optional(), version: z.string().optional(), ...Attributes })
                  .optional(),
                spans: z.array(OtlpSpan).optional(),
                schemaUrl: z.string().optional(),
              }),
            )
            .optional(),
          schemaUrl: z.string().optional(),
        }),
      )
      .optional(),
  })
  .meta({
    id: "OtlpExportTraceServiceRequest",
    description: "OTLP/JSON ExportTraceServiceRequest (opentelemetry-proto collector/trace/v1)",
  });
