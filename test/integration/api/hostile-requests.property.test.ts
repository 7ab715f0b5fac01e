import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * Requests derived from the OpenAPI document (every operation: its path and query parameters,
 * headers and body schema) and from the route table, then mutated the ways hostile clients do.
 * Whatever comes in: no 5xx, every refusal the error envelope, and a refused write changes no row.
 * New routes are covered without touching this file. FUZZ_RUNS sets the number of cases (CI: 10,000).
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
  format?: string;
};
type Parameter = { name: string; in: "path" | "query" | "header"; schema?: Schema };
type Operation = { method: string; path: string; parameters: Parameter[]; body: Schema | undefined; yaml: boolean };

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"] as const;

/** Strings that have broken parsers, routers and databases. */
const evilString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) }, // lone surrogates included
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "\u0000",
      "a\u0000b",
      "\ud800",
      "\udfff",
      "__proto__",
      "constructor",
      "prototype",
      "../../etc/passwd",
      "%00",
      "%",
      "null",
      "true",
      "-1",
      "1e309",
      "NaN",
      "' OR 1=1 --",
      "<script>alert(1)</script>",
      "${7*7}",
      "{{7*7}}",
      "\r\nX-Injected: 1",
      "😀".repeat(50),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 300_000 }).map((n) => "x".repeat(n)) },
);

/** A path segment as it goes on the wire: real ids often, else anything, percent-encoded (a lone surrogate as its raw bytes). */
const encodeSegment = (value: string) => {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80"; // a lone surrogate: invalid UTF-8 on the wire
  }
};

describe("hostile requests (property-based)", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let operations: Operation[];
  let components: Record<string, Schema>;
  const ids: Record<string, string> = {};
  const tokens: string[] = [];

  beforeAll(async () => {
    t = await startTestService(); // the engine off: runs stay queued; limits off
    agent = await startExampleAgent();
    const p = await seedProject(t, agent.baseUrl);
    const run = await p.client.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId },
      { headers: { "idempotency-key": "fuzz" } },
    );
    Object.assign(ids, {
      project_id: p.projectId,
      agent_id: p.agentId,
      environment_id: p.environmentId,
      test_spec_id: p.testSpecId,
      run_id: run.body.run_id,
      sequence: "1",
      turn: "1",
    });
    tokens.push(t.adminToken, p.token);
    const document = JSON.parse((await t.service.api.inject({ method: "GET", url: "/v1/openapi.json" })).body) as {
      paths: Record<
        string,
        Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>
      >;
      components: { schemas: Record<string, Schema> };
    };
    components = document.components.schemas;
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content["application/json"]?.schema,
        yaml: op.requestBody?.content["application/yaml"] !== undefined,
      })),
    );
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  const resolve = (schema: Schema): Schema =>
    schema.$ref ? resolve(components[schema.$ref.split("/").at(-1)!]!) : schema;

  /** A value the schema describes, often; the mutations below make it wrong. */
  function valueOf(raw: Schema, depth = 0): fc.Arbitrary<unknown> {
    const schema = resolve(raw);
    if (depth > 4) return fc.constant(null);
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const choices = schema.anyOf ?? schema.oneOf ?? schema.allOf;
    if (choices) return fc.oneof(...choices.map((choice) => valueOf(choice, depth + 1)));
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case "string":
        return schema.format === "uri"
          ? fc.constantFrom("http://127.0.0.1:9/x", "https://example.com/a", "ftp://x", "http://169.254.169.254/")
          : fc.oneof(fc.constantFrom(...Object.values(ids)), evilString);
      case "integer":
        return fc.oneof(
          fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 1000, 1_000_000) }),
          fc.integer(),
        );
      case "number":
        return fc.oneof(fc.double({ noNaN: true }), fc.integer());
      case "boolean":
        return fc.boolean();
      case "array":
        return fc.array(schema.items ? valueOf(schema.items, depth + 1) : fc.jsonValue(), { maxLength: 3 });
      case "object": {
        const properties = Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([name, property]) => [name, valueOf(property, depth + 1)]),
        );
        return fc.record(properties, { requiredKeys: (schema.required ?? []).filter((name) => name in properties) });
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  /** The body as sent: the schema's value mutated, or something else entirely. */
  function bodyOf(operation: Operation): fc.Arbitrary<string | undefined> {
    const valid = operation.body ? valueOf(operation.body) : fc.constant({});
    const asObject = valid.map((value) =>
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : { value },
    );
    return fc.oneof(
      { weight: 6, arbitrary: valid.map((value) => JSON.stringify(value)) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(asObject, evilString, fc.jsonValue({ maxDepth: 1 }))
          .map(([value, key, extra]) => JSON.stringify({ ...value, [key]: extra })),
      }, // unknown fields
      {
        weight: 2,
        arbitrary: fc
          .tuple(asObject, fc.jsonValue({ maxDepth: 1 }))
          .map(([value, wrong]) =>
            JSON.stringify(Object.fromEntries(Object.keys(value).map((key, i) => [key, i === 0 ? wrong : value[key]]))),
          ),
      }, // a wrong type
      {
        weight: 1,
        arbitrary: asObject.map((value) => JSON.stringify(Object.fromEntries(Object.entries(value).slice(1)))),
      }, // a field missing
      {
        weight: 1,
        arbitrary: asObject.map(
          (value) =>
            `{"__proto__":{"admin":true,"scope":"x"},"constructor":{"prototype":{"polluted":1}},${JSON.stringify(value).slice(1)}`,
        ),
      },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 100, max: 20_000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
      }, // deep nesting
      {
        weight: 1,
        arbitrary: fc.integer({ min: 100, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom("{", "[1,", "nul", '{"a":1}{"b":2}', "\u0000", '"\\ud800"', "", "   ", "1e999999"),
      },
      { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  }

  const YAML_BOMB = [
    "a: &a [x, x, x, x, x, x, x, x, x]",
    ...Array.from(
      { length: 8 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
    ),
  ].join("\n");

  function requestOf(operation: Operation) {
    const pathValue = (name: string) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(ids[name] ?? `${name}_unknown`) },
        { weight: 2, arbitrary: evilString },
      );
    const pathParams = operation.parameters.filter((p) => p.in === "path");
    const queryParams = operation.parameters.filter((p) => p.in === "query");
    return fc.record({
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constant(operation.method) },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      path: fc
        .tuple(...pathParams.map((p) => pathValue(p.name)))
        .map((values) =>
          pathParams.reduce(
            (path, p, i) => path.replace(`{${p.name}}`, encodeSegment(values[i] as string)),
            operation.path,
          ),
        ),
      query: fc
        .tuple(
          fc.subarray(queryParams),
          fc.array(fc.oneof(evilString, fc.integer().map(String), fc.constantFrom(...Object.values(ids))), {
            minLength: queryParams.length,
            maxLength: queryParams.length,
          }),
          fc.option(fc.tuple(evilString, evilString), { freq: 5 }),
        )
        .map(([chosen, values, unknown]) =>
          [
            ...chosen.map((p, i) => `${encodeURIComponent(p.name)}=${encodeSegment(values[i]!)}`),
            ...(unknown ? [`${encodeSegment(unknown[0])}=${encodeSegment(unknown[1])}`] : []),
          ].join("&"),
        ),
      authorization: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...tokens).map((token) => `Bearer ${token}`) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            undefined,
            "",
            "Bearer",
            "Bearer ",
            "Basic YTpi",
            `Bearer ${"a".repeat(10_000)}`,
            "Bearer ask_nope_nope",
            "bearer x y",
          ),
        },
        { weight: 1, arbitrary: evilString.map((text) => `Bearer ${text}`) },
      ),
      contentType: fc.oneof(
        { weight: 6, arbitrary: fc.constant("application/json") },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            undefined,
            "",
            "text/plain",
            "application/yaml",
            "application/json; charset=utf-16",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
            "application/json, text/plain",
            "*/*",
          ),
        },
      ),
      idempotencyKey: fc.oneof(
        { weight: 3, arbitrary: fc.uuid() },
        { weight: 1, arbitrary: fc.constantFrom(undefined, "", " a b ", "é", "x".repeat(300)) },
      ),
      body: operation.yaml
        ? fc.oneof({ weight: 8, arbitrary: bodyOf(operation) }, { weight: 1, arbitrary: fc.constant(YAML_BOMB) })
        : bodyOf(operation),
      // Oversized bodies, rarely: each costs megabytes.
      oversized: fc.integer({ min: 0, max: 199 }).map((n) => n === 0),
    });
  }

  it(`answers every request without a 5xx, refuses with the envelope, and a refused write changes nothing (${RUNS} cases)`, async () => {
    const request = fc
      .constantFrom(...operations)
      .chain((operation) =>
        requestOf(operation).map((r) => ({ ...r, operation: `${operation.method} ${operation.path}` })),
      );
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const before = r.method === "GET" || r.method === "HEAD" ? undefined : await t.service.store.countRows();
        const payload = r.oversized ? `{"name":"${"x".repeat(6 * 1024 * 1024)}"}` : r.body;
        const response = await t.service.api.inject({
          method: r.method as "GET",
          url: `${r.path}${r.query ? `?${r.query}` : ""}`,
          headers: {
            ...(r.authorization !== undefined ? { authorization: r.authorization } : {}),
            ...(r.contentType !== undefined && payload !== undefined ? { "content-type": r.contentType } : {}),
            ...(r.idempotencyKey !== undefined ? { "idempotency-key": r.idempotencyKey } : {}),
          },
          ...(payload !== undefined && r.method !== "GET" && r.method !== "HEAD" ? { payload } : {}),
        });
        const where = `${r.operation} as ${r.method} ${r.path.slice(0, 200)}?${r.query.slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
        if (response.statusCode >= 500) throw new Error(`5xx: ${where}`);
        if (response.statusCode >= 400 && r.method !== "HEAD") {
          const body = JSON.parse(response.body) as {
            error?: { code?: unknown; message?: unknown; retryable?: unknown; request_id?: unknown };
          };
          if (
            typeof body.error?.code !== "string" ||
            typeof body.error.message !== "string" ||
            typeof body.error.retryable !== "boolean" ||
            body.error.request_id !== response.headers["x-request-id"]
          ) {
            throw new Error(`not the envelope: ${where}`);
          }
          if (before !== undefined) {
            const after = await t.service.store.countRows();
            const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
            if (changed.length > 0) {
              throw new Error(
                `a refused write changed rows of ${changed.map((table) => `${table} ${before[table]}→${after[table]}`).join(", ")}: ${where}`,
              );
            }
          }
        }
      }),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined, endOnFailure: true },
    );
    // Nothing leaked onto Object.prototype from a `__proto__` body.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  }, 600_000);
});
