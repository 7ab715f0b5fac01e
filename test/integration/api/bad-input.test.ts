import { connect } from "node:net";
import {
  DEFAULT_BODY_LIMIT as BODY_LIMIT,
  DEFAULT_SPEC_BODY_LIMIT as SPEC_BODY_LIMIT,
} from "../../../server/http/body-limits.js";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EXAMPLE_SPEC_YAML, type SeededProject } from "../../helpers/seed.js";
import { startSeededService, type AgentEndpoint } from "../../helpers/seeded-service.js";
import type { TestService } from "../../helpers/service.js";
import type { CallOptions } from "../../helpers/api-client.js";

describe("bad input", () => {
  let t: TestService;
  let agent: AgentEndpoint;
  let p: SeededProject;
  let close: () => Promise<void>;
  let valid: Record<string, Record<string, unknown>>;

  beforeAll(async () => {
    ({ t, agent, p, close } = await startSeededService());
    valid = {
      "/v1/projects": { name: "fresh-project" },
      "/v1/agents": { name: "fresh-agent", version: "1" },
      "/v1/environments": {
        name: "fresh-env",
        agent_id: p.agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl },
      },
      "/v1/test-specs": { spec: (await p.client.get(`/v1/test-specs/${p.testSpecId}`)).body.spec },
      "/v1/runs": { test_spec_id: p.testSpecId, environment_id: p.environmentId },
    };
  });
  afterAll(() => close());

  /** Over the route's body limit: 1 MiB, and 5 MiB for specs (which may carry their tables). */
  const huge = (path: string) =>
    JSON.stringify({ name: "x".repeat((path === "/v1/test-specs" ? SPEC_BODY_LIMIT : BODY_LIMIT) + 10) });
  const wrongTypes: Record<string, Record<string, unknown>> = {
    "/v1/projects": { name: 42 },
    "/v1/agents": { name: "a", version: ["1"] },
    "/v1/environments": { name: "e", agent_id: "x", endpoint: { protocol: "grpc", base_url: "ftp://x" } },
    "/v1/test-specs": { spec: { schema_version: 1, name: "x", gates: "all" } },
    "/v1/runs": { test_spec_id: 7, environment_id: null },
  };

  const variants: [string, (path: string) => CallOptions, number, string][] = [
    ["malformed JSON", () => ({ body: '{"name": "x",', contentType: "application/json" }), 400, "MALFORMED_BODY"],
    ["an empty JSON body", () => ({ body: "", contentType: "application/json" }), 400, "MALFORMED_BODY"],
    ["a JSON array", () => ({ body: "[]", contentType: "application/json" }), 400, "VALIDATION_FAILED"],
    // Content-Type: application/json and no body at all (no Content-Length): found by the property test.
    ["no body at all", () => ({ contentType: "application/json" }), 400, ""],
    [
      "a body over its route's limit",
      (path) => ({ body: huge(path), contentType: "application/json" }),
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    ["text/plain", () => ({ body: "name=x", contentType: "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE"],
    [
      "form encoding",
      () => ({ body: "name=x", contentType: "application/x-www-form-urlencoded" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    ["wrong types", (path) => ({ json: wrongTypes[path] }), 400, "VALIDATION_FAILED"],
    [
      "a lone surrogate in a string",
      (path) => ({ body: withLoneSurrogate(JSON.stringify(valid[path])), contentType: "application/json" }),
      400,
      "VALIDATION_FAILED",
    ],
    ["an unknown field", (path) => ({ json: { ...valid[path], surprise: true } }), 400, "VALIDATION_FAILED"],
    [
      "a prototype-polluting key",
      (path) => ({
        body: JSON.stringify(valid[path]).replace(/^\{/, '{"__proto__":{"x":1},'),
        contentType: "application/json",
      }),
      400,
      "",
    ],
  ];
  /** The first string value (not a key) with the escape of a lone surrogate added: valid JSON, not I-JSON. */
  const withLoneSurrogate = (json: string) => {
    const changed = json.replace(/"([^"]*)"(?=[,}\]])/, '"$1\\ud800"');
    expect(changed).not.toBe(json);
    return changed;
  };
  const endpoints = ["/v1/projects", "/v1/agents", "/v1/environments", "/v1/test-specs", "/v1/runs"];
  const cases = endpoints.flatMap((path) =>
    variants.map(([name, make, status, code]) => [path, name, make, status, code] as const),
  );

  it.each(cases)("POST %s with %s answers the envelope and writes nothing", async (path, _name, make, status, code) => {
    const before = await t.service.store.countRows();
    const client = path === "/v1/projects" ? t.admin : p.client;
    const options = make(path);
    const response = await client.call("POST", path, {
      ...options,
      headers: { "idempotency-key": `bad-${Math.random()}` },
    });
    expect(response.status).toBe(status);
    if (code) expect(response.body.error.code).toBe(code);
    expect(response.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
    expect(await t.service.store.countRows()).toEqual(before);
  });

  it("names the string that holds a lone surrogate, in a spec as in any body", async () => {
    const spec = JSON.stringify(valid["/v1/test-specs"]).replace('"name":"', '"name":"\\udc00');
    for (const [path, body, named] of [
      ["/v1/agents", '{"name":"a\\ud83d","version":"1"}', "body.name"],
      ["/v1/test-specs", spec, "body.spec.name"],
    ] as const) {
      const response = await p.client.call("POST", path, { body, contentType: "application/json" });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([{ path: named, message: expect.stringMatching(/lone surrogate/) }]);
    }
    // A surrogate pair is a character like any other.
    const pair = await p.client.call("POST", "/v1/agents", {
      body: '{"name":"smiling","version":"1","description":"smile \\ud83d\\ude00"}',
      contentType: "application/json",
    });
    expect(pair.status).toBe(201);
    expect(pair.body.description).toBe("smile \u{1F600}");
  });

  it("names every failing field", async () => {
    const response = await p.client.post("/v1/environments", {
      name: "",
      agent_id: p.agentId,
      endpoint: { protocol: "openai-chat", base_url: "not a url", extra: 1 },
    });
    expect(response.status).toBe(400);
    const paths = [...new Set(response.body.error.details.map((d: { path: string }) => d.path))].sort();
    expect(paths).toEqual(["body.endpoint.base_url", "body.endpoint.extra", "body.name"]);
  });

  it.each([
    ["http://169.254.169.254/latest", "link-local or cloud metadata"],
    ["http://metadata.google.internal/v1", "metadata host"],
    ["http://[fe80::1]/v1", "link-local"],
    ["http://user:pw@agent.internal/v1", "credentials"],
  ])("refuses the agent address %s", async (base_url, reason) => {
    const before = await t.service.store.countRows();
    const response = await p.client.post("/v1/environments", {
      name: "metadata",
      agent_id: p.agentId,
      endpoint: { protocol: "openai-chat", base_url },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.error.details)).toContain(reason);
    expect(await t.service.store.countRows()).toEqual(before);
  });

  it.each([
    ["not YAML", "scenarios: [unclosed", "not valid YAML"],
    ["a YAML scalar", "just text", "expected object"],
    ["duplicate keys", "name: a\nname: b\n", "unique"],
    [
      "an alias bomb",
      "a: &a [x, x, x, x, x, x, x, x, x, x]\n" +
        Array.from(
          { length: 9 },
          (_, i) =>
            `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
              .fill(`*${String.fromCharCode(97 + i)}`)
              .join(", ")}]`,
        ).join("\n"),
      "",
    ],
    ["a bad regex", EXAMPLE_SPEC_YAML.replace('"(?i)refund"', '"(unclosed"'), "regular expression"],
  ])("refuses a YAML spec with %s and writes nothing", async (_name, yaml, message) => {
    const before = await t.service.store.countRows();
    const response = await p.client.call("POST", "/v1/test-specs", { body: yaml, contentType: "application/yaml" });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("VALIDATION_FAILED");
    if (message) expect(JSON.stringify(response.body.error)).toContain(message);
    expect(await t.service.store.countRows()).toEqual(before);
  });

  // Well-formed YAML of the spec's shape whose parts contradict each other: 422, not 400.
  it.each([
    [
      "a gate with two requirements",
      EXAMPLE_SPEC_YAML.replace(
        "require: { expectations: all }",
        "require: { expectations: all, max_finding_severity: low }",
      ),
      "require one of: expectations, metric (with min_pass_rate), max_finding_severity, coverage — and/or no_regression",
    ],
    [
      "a gate on an undefined metric",
      EXAMPLE_SPEC_YAML.replace("metric: task_completion", "metric: nope"),
      "not defined by any scenario",
    ],
    ["a canary check without a canary", EXAMPLE_SPEC_YAML.replace("canary: true ", "canary: false"), "canary"],
  ])("refuses a YAML spec with %s as inconsistent and writes nothing", async (_name, yaml, message) => {
    const before = await t.service.store.countRows();
    const response = await p.client.call("POST", "/v1/test-specs", { body: yaml, contentType: "application/yaml" });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe("SPEC_INCONSISTENT");
    expect(JSON.stringify(response.body.error)).toContain(message);
    expect(await t.service.store.countRows()).toEqual(before);
  });

  it("refuses YAML on endpoints that take only JSON", async () => {
    const response = await p.client.call("POST", "/v1/agents", {
      body: "name: a\nversion: '1'",
      contentType: "application/yaml",
    });
    expect(response.status).toBe(415);
  });

  it.each([
    ["/v1/runs?surprise=1", "query.surprise"],
    ["/v1/runs?limit=5&limit=6", "query.limit"],
    ["/v1/agents?cursor=", "query.cursor"],
    ["/v1/test-specs/x?spec_version=", "query.spec_version"],
  ])("refuses the query %s", async (path, field) => {
    const response = await p.client.get(path);
    expect(response.status).toBe(400);
    expect(response.body.error.details[0].path).toBe(field);
  });

  it("answers unknown routes with 404 and wrong methods with 405, in the envelope", async () => {
    const unknown = await p.client.get("/v1/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
    const wrong = await p.client.call("DELETE", `/v1/runs`);
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe("METHOD_NOT_ALLOWED");
    expect(wrong.headers.get("allow")).toContain("POST");
    const put = await p.client.call("PUT", `/v1/runs/run_x/evidence`, { json: {} });
    expect(put.status).toBe(405);
  });

  /** A request written on the socket as it is, and the answer read off it: for what fetch will not send. */
  function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
    const { port } = new URL(t.baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write(request));
      let answer = "";
      socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
      socket.on("error", reject);
      socket.on("close", () => {
        const [head = "", body = ""] = answer.split("\r\n\r\n");
        resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
      });
    });
  }
  const envelopeOf = (body: string) =>
    JSON.parse(body) as { error: { code: string; message: string; request_id: string } };

  it("refuses every method no route takes with 405 and Allow, in the envelope: ones Node knows and ones it does not", async () => {
    for (const method of ["QUERY", "PROPFIND", "BREW"]) {
      const answer = await raw(`${method} /v1/runs HTTP/1.1\r\nHost: assure\r\nConnection: close\r\n\r\n`);
      expect([method, answer.status]).toEqual([method, 405]);
      expect(answer.headers).toMatch(/^allow: post, get, head$/m);
      expect(envelopeOf(answer.body).error).toMatchObject({
        code: "METHOD_NOT_ALLOWED",
        request_id: expect.stringMatching(/^req_/),
      });
    }
  });

  it("refuses headers over 16 KiB (a 17,000-character cursor) with 431 in the envelope", async () => {
    const answer = await raw(
      `GET /v1/runs?cursor=${"a".repeat(17_000)} HTTP/1.1\r\nHost: assure\r\nAuthorization: Bearer ${p.token}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(envelopeOf(answer.body).error.code).toBe("HEADERS_TOO_LARGE");
  });

  it("refuses a request that is not HTTP in the envelope", async () => {
    const answer = await raw("GET /v1/runs HTTP/1.1\r\nHost assure\r\n\r\n");
    expect(answer.status).toBe(400);
    expect(envelopeOf(answer.body).error.code).toBe("VALIDATION_FAILED");
  });

  it("answers malformed URLs and over-long ids in the envelope", async () => {
    const badUrl = await p.client.get("/v1/runs/%E0%A4%A");
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error.code).toBe("VALIDATION_FAILED");
    const longId = await p.client.get(`/v1/runs/run_${"x".repeat(300)}`);
    expect(longId.status).toBe(404);
    expect(longId.body.error.code).toBe("NOT_FOUND");
  });

  it("puts the request id on successful responses too", async () => {
    const response = await p.client.get("/v1/runs");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  });
});
