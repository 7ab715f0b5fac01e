import type { Deprecation } from "../contract/index.js";
import type { RouteEntry } from "./context.js";
import { RESPONSE_HEADERS, TAGS, errorResponses, successHeaders } from "./openapi-responses.js";

type Operation = {
  operationId?: string;
  summary?: string;
  deprecated?: boolean;
  description?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
  responses?: Record<string, Record<string, unknown>>;
};
type Schema = { properties?: Record<string, { deprecated?: boolean; description?: string }> };

export interface OpenApiDocument {
  info: Record<string, unknown>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; [other: string]: unknown };
  [other: string]: unknown;
}

/** `METHOD /v1/runs/{run_id}`: how an operation is named below, in OpenAPI's path syntax. */
export const operationKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/:(\w+)/g, "{$1}")}`;

const referenced = (value: unknown) =>
  [...(JSON.stringify(value) ?? "").matchAll(/"#\/components\/schemas\/([^"/#]+)"/g)].map((m) => m[1]!);

/** The components `value` uses, directly or through other components. */
function componentsUsedBy(value: unknown, schemas: Record<string, unknown>): Set<string> {
  const used = new Set(referenced(value));
  for (const queue = [...used]; queue.length > 0;) {
    for (const name of referenced(schemas[queue.pop()!])) {
      if (!used.has(name)) {
        used.add(name);
        queue.push(name);
      }
    }
  }
  return used;
}

const note = (d: Deprecation) => `Deprecated since ${d.since}; sunset ${d.sunset}. Use ${d.instead} instead.`;

/**
 * The document as served: only the components some operation uses (the generator emits every
 * registered schema, as request and response variants), every operation named, and what is
 * deprecated marked. Returns, per operation, the deprecations its responses carry headers for.
 * A deprecation naming nothing in the document is a mistake: it throws.
 */
export function finishOpenApiDocument(
  generated: OpenApiDocument,
  deprecations: readonly Deprecation[],
  routes: readonly RouteEntry[],
) {
  const document: OpenApiDocument = { ...generated, components: { ...generated.components } };
  const { schemas } = document.components;

  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ key: operationKey(method, path), operation })),
  );
  const unnamed = operations.filter(({ operation }) => !operation.operationId).map(({ key }) => key);
  if (unnamed.length > 0) throw new Error(`Operations without an operationId: ${unnamed.join(", ")}`);

  const byOperation = new Map<string, Deprecation[]>();
  const add = (key: string, deprecation: Deprecation) =>
    byOperation.set(key, [...(byOperation.get(key) ?? []), deprecation]);
  for (const deprecation of deprecations) {
    if (deprecation.operation !== undefined) {
      const found = operations.find(({ operation }) => operation.operationId === deprecation.operation);
      if (!found) throw new Error(`A deprecation names the operation '${deprecation.operation}', which does not exist`);
      found.operation.deprecated = true;
      found.operation.description = [found.operation.description, note(deprecation)].filter(Boolean).join("\n\n");
      add(found.key, deprecation);
      continue;
    }
    const [schemaName, field] = deprecation.field.split(".") as [string, string];
    const property = schemas[schemaName]?.properties?.[field];
    if (!property) {
      throw new Error(`A deprecation names the field '${deprecation.field}', which no response schema has`);
    }
    property.deprecated = true;
    property.description = [property.description, note(deprecation)].filter(Boolean).join(" ");
    for (const { key, operation } of operations) {
      const successes = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith("2"));
      if (componentsUsedBy(successes, schemas).has(schemaName)) add(key, deprecation);
    }
  }
  for (const { key, operation } of operations) {
    const route = routes.find((candidate) => candidate.operationId === operation.operationId)!;
    describeOperation(key.split(" ")[0]!, operation, route, byOperation.has(key));
  }
  document.tags = TAGS.filter((tag) =>
    operations.some(({ operation }) => (operation as { tags?: string[] }).tags?.includes(tag.name)),
  );
  const { components: _components, ...rest } = document;
  const keep = componentsUsedBy(rest, schemas);
  const used = JSON.stringify(document.paths);
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => keep.has(name))),
    headers: Object.fromEntries(
      Object.entries(RESPONSE_HEADERS).filter(([name]) => used.includes(`"#/components/headers/${name}"`)),
    ),
  };
  return { document, byOperation };
}

/** A YAML body is the spec's text: a string whose content the spec's schema describes. */
const YAML_BODY = {
  type: "string",
  contentMediaType: "application/yaml",
  contentSchema: { $ref: "#/components/schemas/TestSpecDocumentInput" },
  description: "The spec's YAML text (application/x-yaml and text/yaml are taken too)",
};

const PROTOBUF_TYPES = ["application/x-protobuf", "application/protobuf"];

/** A protobuf body (an OTLP export, and its answer): bytes, the message named. */
const protobufBody = (message: string) => ({
  schema: {
    type: "string",
    contentMediaType: "application/x-protobuf",
    description: `The ${message} message (opentelemetry-proto), protobuf-encoded`,
  },
});

/** An operation as served: its scope said, its error answers and headers listed, a YAML or protobuf body as such. */
function describeOperation(method: string, operation: Operation, route: RouteEntry, deprecated: boolean) {
  const scope = route.scope;
  // A bearer scheme lists no scopes in a security requirement: the scope is said in words and as x-scope.
  if (scope) (operation as Record<string, unknown>)["x-scope"] = scope;
  const needs = scope ? `Needs an API key with the scope \`${scope}\`.` : "Needs no API key.";
  operation.description = [operation.description ?? `${operation.summary ?? ""}.`, needs].join("\n\n");
  if (operation.requestBody?.content["application/yaml"]) {
    operation.requestBody.content["application/yaml"] = { schema: YAML_BODY };
  }
  // The one protobuf body: an OTLP trace export, answered in its encoding.
  const content = operation.requestBody?.content ?? {};
  if (PROTOBUF_TYPES.some((type) => content[type])) {
    for (const type of PROTOBUF_TYPES.filter((candidate) => content[candidate])) {
      content[type] = protobufBody("ExportTraceServiceRequest");
    }
    const answer = operation.responses?.["200"] as { content?: Record<string, unknown> } | undefined;
    if (answer?.content) answer.content["application/x-protobuf"] = protobufBody("ExportTraceServiceResponse");
  }
  const responses: Record<string, Record<string, unknown>> = {};
  const ranges: Record<string, Record<string, unknown>> = {};
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status.startsWith("2")) responses[status] = { ...response, headers: successHeaders(route, status, deprecated) };
    // 4XX and 5XX stay: the envelope of any status a later version adds.
    else ranges[status] = { ...response, description: "Any other error status (none today): the same envelope" };
  }
  operation.responses = { ...responses, ...(errorResponses(route, method, deprecated) as typeof responses), ...ranges };
}

/** `Deprecation` (RFC 9745: when, as `@<unix seconds>`) and `Sunset` (RFC 8594: an HTTP date); the earliest of each. */
export function deprecationHeaders(deprecations: readonly Deprecation[]): Record<string, string> {
  const earliest = (dates: string[]) => Math.min(...dates.map((date) => Date.parse(`${date}T00:00:00Z`)));
  return {
    deprecation: `@${earliest(deprecations.map((d) => d.since)) / 1000}`,
    sunset: new Date(earliest(deprecations.map((d) => d.sunset))).toUTCString(),
  };
}
