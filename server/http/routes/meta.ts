import { z } from "zod";
import { TestSpecDocument, TypedRunEvent } from "../../contract/index.js";
import type { Api } from "../context.js";
import { toPublishedJsonSchema } from "../json-schema.js";

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

/**
 * The event types and their data, for consumers of the trace and of webhooks. Open, as the
 * envelope is: a type not listed (added later) is valid, and so is a field a type gains.
 */
export function eventsJsonSchema(): Record<string, unknown> {
  const { $schema, ...known } = toPublishedJsonSchema(TypedRunEvent, "output");
  return {
    $schema,
    $id: "/v1/schemas/events.json",
    title: "assure run events",
    description: "The `type` and `data` of each event a run records (envelope v1). Ignore types you do not know.",
    anyOf: [
      known,
      {
        type: "object",
        properties: { type: { type: "string" }, data: { type: "object" } },
        required: ["type", "data"],
      },
    ],
  };
}

/** Health, the OpenAPI document (`openApiDocument` is read once the API is ready) and the JSON Schemas. */
export function registerMetaRoutes(
  api: Api,
  openApiDocument: () => string,
  readiness: () => Promise<string[]> = async () => [],
) {
  const specSchema = JSON.stringify(testSpecJsonSchema());
  const eventsSchema = JSON.stringify(eventsJsonSchema());
  const hidden = { schema: { hide: true } as object, config: { limit: "public" as const } };

  // Alive: the process answers. Ready: it may be sent traffic (migrated, writable, its engine running, not draining).
  api.get("/healthz", hidden, async () => ({ status: "ok" }));
  api.get("/readyz", hidden, async (_request, reply) => {
    const reasons = await readiness();
    return reply
      .code(reasons.length === 0 ? 200 : 503)
      .send(reasons.length === 0 ? { status: "ready" } : { status: "unavailable", reasons });
  });
  api.get("/v1/openapi.json", hidden, async (_request, reply) =>
    reply.type("application/json").send(openApiDocument()),
  );
  api.get("/v1/schemas/test-spec.json", hidden, async (_request, reply) =>
    reply.type("application/schema+json").send(specSchema),
  );
  api.get("/v1/schemas/events.json", hidden, async (_request, reply) =>
    reply.type("application/schema+json").send(eventsSchema),
  );
}
