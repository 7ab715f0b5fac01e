import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { compile } from "@jmespath-community/jmespath";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { ADMIN_ONLY_SCOPES, SCOPES } from "../../../server/auth/scopes.js";
import { patternError } from "../../../server/specs/pattern.js";
import { schemaArbitrary, type JsonSchema } from "../../helpers/json-schema-arbitrary.js";
import { makeResponseValidator, type OpenApiDocument } from "../../helpers/openapi.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * Requests the OpenAPI document says are valid (every operation: its path, query and header
 * parameters and its body, generated from their JSON Schemas and checked against them), sent as
 * a client that read only the document would send them. None may be refused as invalid: a rule
 * the service enforces is in the document, and a refusal the document cannot foresee (an unknown
 * id, a state, a cursor it never issued) answers with its own status and code, which the
 * operation documents. No 5xx, and every answer is one the operation documents.
 * VALID_REQUEST_RUNS sets the requests per operation (default 30).
 */
/** JMESPath expressions (the document's format `jmespath`), as an http agent's answer is read. */
const JMESPATH = fc.oneof(
  fc.constantFrom("reply", "data.text", "messages[-1].content", "steps[?type=='tool'].{name: tool, arguments: args}"),
  fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}(\.[a-z_][a-z0-9_]{0,10}){0,3}$/),
);
/** Patterns (the document's format `ecmascript-pattern`), as a spec's `response.matches` is read. */
const PATTERN = fc.oneof(
  fc.constantFrom("(?i)refund", "^A-\\d+$", "delivered|shipped", "(?s)total:.*"),
  fc.stringMatching(/^[a-z0-9 ]{1,20}$/),
);
const compilesAsJmesPath = (expression: string) => {
  try {
    compile(expression);
    return true;
  } catch {
    return false;
  }
};

const RUNS = Number(process.env.VALID_REQUEST_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 27;
/** What a request the document allows must never be told. */
const INVALID = new Set(["VALIDATION_FAILED", "MALFORMED_BODY"]);

type Parameter = { name: string; in: "path" | "query" | "header"; required?: boolean; schema: JsonSchema };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
};
type Document = OpenApiDocument & {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
};

interface ValidRequest {
  path: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: { contentType: string; payload: string } | undefined;
  admin: boolean;
}

describe("requests the OpenAPI document allows (property-based)", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let document: Document;
  let ajv: Ajv2020;
  const known: Record<string, string[]> = {};
  let projectToken: string;

  beforeAll(async () => {
    t = await startTestService(); // the engine off: runs stay queued
    agent = await startExampleAgent();
    const p = await seedProject(t, agent.baseUrl);
    projectToken = await t.issueKey(
      p.projectId,
      SCOPES.filter((scope) => !ADMIN_ONLY_SCOPES.includes(scope)),
    );
    const run = await p.client.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId },
      { headers: { "idempotency-key": "valid-requests" } },
    );
    const decision = await t.admin.withToken(projectToken).post("/v1/release-decisions", {
      subject: { run_ids: [run.body.run_id] },
    });
    const webhook = await t.admin.withToken(projectToken).post("/v1/webhooks", { url: `${agent.baseUrl}/hook` });
    Object.assign(known, {
      project_id: [p.projectId],
      agent_id: [p.agentId],
      environment_id: [p.environmentId],
      environment: [p.environmentId, "staging"],
      test_spec_id: [p.testSpecId],
      spec_version: [p.specVersion],
      run_id: [run.body.run_id],
      run_ids: [run.body.run_id],
      decision_id: [decision.body.decision_id],
      webhook_id: [webhook.body.webhook_id],
      sequence: ["1", "2"],
    });
    document = (await (await fetch(`${t.baseUrl}/v1/openapi.json`)).json()) as Document;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    ajv.addFormat("jmespath", { type: "string", validate: (expression: string) => compilesAsJmesPath(expression) });
    ajv.addFormat("ecmascript-pattern", { type: "string", validate: (source: string) => !patternError(source) });
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  const validators = new Map<JsonSchema, ValidateFunction>();
  const isValid = (schema: JsonSchema, value: unknown) => {
    let validate = validators.get(schema);
    if (!validate) {
      validate = ajv.compile({ components: document.components, ...(schema as object) });
      validators.set(schema, validate);
    }
    return validate(value);
  };

  const generate = (schema: JsonSchema, name?: string) =>
    schemaArbitrary(
      schema,
      {
        components: document.components.schemas,
        known: (property) => known[property],
        formats: { jmespath: JMESPATH, "ecmascript-pattern": PATTERN },
        serialize: (value, mediaType) => (mediaType?.includes("yaml") ? stringify(value) : JSON.stringify(value)),
      },
      name,
    );

  /** A request the operation's document allows, and whether it is (checked part by part). */
  function requestsOf(operation: Operation): fc.Arbitrary<ValidRequest> {
    const parameters = operation.parameters ?? [];
    const partOf = (where: Parameter["in"]) =>
      fc.record(
        Object.fromEntries(parameters.filter((p) => p.in === where).map((p) => [p.name, generate(p.schema, p.name)])),
        { requiredKeys: parameters.filter((p) => p.in === where && p.required).map((p) => p.name) },
      );
    // Bytes the document describes only in words (an OTLP export as protobuf) are not generated:
    // no JSON Schema says which bytes are valid. The same operation's JSON form is.
    const described = Object.entries(operation.requestBody?.content ?? {}).filter(
      ([, { schema }]) => typeof schema !== "object" || !schema.contentMediaType || schema.contentSchema,
    );
    const bodies = described.map(([contentType, { schema }]) =>
      generate(schema).map((value) => ({
        contentType,
        payload: contentType.includes("json")
          ? JSON.stringify(value)
          : typeof value === "string"
            ? value
            : stringify(value),
      })),
    );
    return fc.record({
      path: partOf("path") as fc.Arbitrary<Record<string, string>>,
      query: partOf("query"),
      headers: partOf("header") as fc.Arbitrary<Record<string, string>>,
      body: bodies.length > 0 ? fc.oneof(...bodies) : fc.constant(undefined),
      admin: fc.boolean(),
    });
  }

  function documentValid(operation: Operation, request: ValidRequest): boolean {
    for (const parameter of operation.parameters ?? []) {
      const part = parameter.in === "path" ? request.path : parameter.in === "query" ? request.query : request.headers;
      if (part[parameter.name] !== undefined && !isValid(parameter.schema, part[parameter.name])) return false;
    }
    if (request.body === undefined) return true;
    const { schema } = operation.requestBody!.content[request.body.contentType]!;
    const { contentType, payload } = request.body;
    if (contentType.includes("json")) return isValid(schema, JSON.parse(payload));
    // A text body whose content the document describes (a spec's YAML): that content is checked.
    const content = typeof schema === "object" ? schema.contentSchema : undefined;
    return content === undefined ? isValid(schema, payload) : isValid(content, parse(payload));
  }

  it(`refuses none of them as invalid, answers none with a 5xx, and each answer is documented (${RUNS} per operation)`, async () => {
    const validateResponse = makeResponseValidator(document);
    const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })),
    );
    const failures: string[] = [];
    const tally = { requests: 0, notDocumentValid: 0, refusedAsInvalid: 0, serverErrors: 0, undocumented: 0 };
    const answers = new Map<string, number>();
    for (const [index, { template, method, operation }] of operations.entries()) {
      const samples = fc.sample(requestsOf(operation), { numRuns: RUNS, seed: SEED + index });
      for (const request of samples) {
        // `.` and `..` are dot segments, which a URL drops: no client can send them as a path parameter.
        const unsendable = Object.values(request.path).some((value) => value === "." || value === "..");
        if (unsendable || !documentValid(operation, request)) {
          tally.notDocumentValid++;
          continue;
        }
        tally.requests++;
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(request.path[name]!));
        const query = new URLSearchParams(
          Object.entries(request.query).map(([name, value]) => [name, String(value)]),
        ).toString();
        const url = `${path}${query ? `?${query}` : ""}`;
        const response = await t.service.api.inject({
          method: method as "GET",
          url,
          headers: {
            ...request.headers,
            authorization: `Bearer ${request.admin ? t.adminToken : projectToken}`,
            ...(request.body ? { "content-type": request.body.contentType } : {}),
          },
          ...(request.body ? { payload: request.body.payload } : {}),
        });
        const json = String(response.headers["content-type"] ?? "").startsWith("application/json");
        const body =
          response.body === "" || !json ? undefined : (JSON.parse(response.body) as { error?: { code: string } });
        const code = body?.error?.code;
        answers.set(
          `${response.statusCode}${code ? ` ${code}` : ""}`,
          (answers.get(`${response.statusCode}${code ? ` ${code}` : ""}`) ?? 0) + 1,
        );
        const where = `${operation.operationId}: ${method} ${url.slice(0, 300)} ${request.body?.payload.slice(0, Number(process.env.SHOW_BODY ?? 400)) ?? ""} → ${response.statusCode} ${response.body.slice(0, 400)}`;
        if (code !== undefined && INVALID.has(code)) {
          tally.refusedAsInvalid++;
          failures.push(`refused as invalid: ${where}`);
        } else if (response.statusCode >= 500) {
          tally.serverErrors++;
          failures.push(`5xx: ${where}`);
        } else {
          // The status itself is listed (4XX and 5XX are only for statuses a later version adds).
          const listed = (document.paths[template]![method.toLowerCase()] as { responses: Record<string, unknown> })
            .responses[String(response.statusCode)];
          const problems = listed
            ? validateResponse(method, path, response.statusCode, body)
            : [`${response.statusCode} is not listed`];
          if (problems.length > 0) {
            tally.undocumented++;
            failures.push(`not as documented (${problems.join("; ")}): ${where}`);
          }
        }
      }
    }
    const summary = {
      operations: operations.length,
      runs: RUNS,
      ...tally,
      answers: Object.fromEntries([...answers].sort()),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    // One example of each kind of failure (operation, answer, where): the list stays readable.
    const kinds = new Map<string, string>();
    for (const failure of failures) {
      const kind = failure.replace(/: [A-Z]+ \/.*→ (\d+) .*?"code":"(\w+)".*?("path":"[^"]*")?.*$/s, " $1 $2 $3");
      kinds.set(kind.slice(0, 200), failure);
    }
    expect([...kinds.values()]).toEqual([]);
    expect(tally.notDocumentValid).toBeLessThan(tally.requests);
    expect(tally.requests).toBeGreaterThan(operations.length * RUNS * 0.8);
  }, 300_000);
});
