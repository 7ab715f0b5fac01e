import { z } from "zod";
import { TestSpecDocument } from "../../contract/index.js";
import type { Api } from "../context.js";

/** JSON Schema of the spec format, for editors (e.g. `# yaml-language-server: $schema=...`). */
export function testSpecJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(TestSpecDocument, { io: "input", unrepresentable: "any" }) as {
    $schema: string;
    $defs: Record<string, object>;
  };
  const { TestSpecDocument: root, ...others } = generated.$defs;
  return {
    $schema: generated.$schema,
    $id: "/v1/schemas/test-spec.json",
    ...root,
    ...(Object.keys(others).length > 0 ? { $defs: others } : {}),
  };
}

export function registerMetaRoutes(api: Api) {
  const specSchema = JSON.stringify(testSpecJsonSchema());

  api.get("/healthz", { schema: { hide: true } as object }, async () => ({ status: "ok" }));

  let openApiDocument: string | undefined;
  api.get("/v1/openapi.json", { schema: { hide: true } as object }, async (_request, reply) => {
    openApiDocument ??= JSON.stringify(withoutUnusedSchemas(api.swagger() as OpenApiDocument));
    return reply.type("application/json").send(openApiDocument);
  });

  api.get("/v1/schemas/test-spec.json", { schema: { hide: true } as object }, async (_request, reply) =>
    reply.type("application/schema+json").send(specSchema),
  );
}

interface OpenApiDocument {
  components?: { schemas?: Record<string, unknown> };
}

/**
 * The generator emits every registered schema twice (as request and response variants); keep
 * only the components that some path actually references.
 */
export function withoutUnusedSchemas<T extends OpenApiDocument>(document: T): T {
  const schemas = document.components?.schemas ?? {};
  const referenced = (value: unknown) => [...(JSON.stringify(value) ?? "").matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  const { components: _components, ...rest } = document;
  const keep = new Set(referenced(rest));
  for (const queue = [...keep]; queue.length > 0; ) {
    for (const name of referenced(schemas[queue.pop()!])) {
      if (!keep.has(name)) {
        keep.add(name);
        queue.push(name);
      }
    }
  }
  return {
    ...document,
    components: { ...document.components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => keep.has(name))) },
  };
}
