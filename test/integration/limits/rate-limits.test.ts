import { createHmac } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { connect, type AddressInfo } from "node:net";
import { createHttpServer } from "../../../app/http-server.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeRateLimit } from "../../../server/limits/rate-limit.js";
import type { ApiResponse } from "../../helpers/api-client.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const expectRateLimited = (response: ApiResponse, code = "RATE_LIMITED") => {
  expect(response.status).toBe(429);
  expect(response.body.error).toMatchObject({ code, retryable: true });
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
};

describe("rate limits and quotas", () => {
  let t: TestService | undefined;
  let agent: ExampleAgent | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => {
    await agent?.close();
  });
  const exampleAgent = async () => (agent ??= await startExampleAgent());
  const count = (table: string) =>
    t!.withStore(
      async (store) => (await store.sql.prepare(`SELECT COUNT(*) AS n FROM ${table}`).pluck().get<number>())!,
    );

  it("limits each API key per minute, reports the budget on every response, and leaves other keys alone", async () => {
    t = await startTestService({ env: { ASSURE_RATE_LIMIT_PER_MINUTE: "5" } });
    const other = t.admin.withToken(await t.issueKey(null));
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.admin.get("/v1/projects");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("5");
      const reset = Number(response.headers.get("x-ratelimit-reset"));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
      remaining.push(Number(response.headers.get("x-ratelimit-remaining")));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const refused = await t.admin.post("/v1/projects", { name: "one-too-many" });
    expectRateLimited(refused);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(await count("projects")).toBe(0); // the refused write changed nothing
    expect((await other.get("/v1/projects")).status).toBe(200);
  });

  it("limits requests without a valid key per client address, so guessing keys is slow", async () => {
    t = await startTestService({ env: { ASSURE_UNAUTHENTICATED_PER_MINUTE: "3" } });
    for (let i = 0; i < 3; i++) {
      expect((await t.anonymous.get("/v1/projects", { token: `ask_wrong${i}` })).status).toBe(401);
    }
    expectRateLimited(await t.anonymous.get("/v1/projects", { token: "ask_wrong" }));
    expectRateLimited(await t.anonymous.get("/v1/projects"));
    // A valid key spends its own budget, not the address's.
    expect((await t.admin.get("/v1/projects")).status).toBe(200);
  });

  it("gives pages, badges and health checks a per-address budget of their own", async () => {
    // Three: the test helper's start read the OpenAPI document, a public route too.
    t = await startTestService({ env: { ASSURE_PUBLIC_PER_MINUTE: "3", ASSURE_UNAUTHENTICATED_PER_MINUTE: "1" } });
    expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.baseUrl}/runs/run_unknown?exp=1&sig=x`)).status).toBe(404);
    const refused = await fetch(`${t.baseUrl}/healthz`);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    // The unauthenticated API budget is apart: one left.
    expect((await t.anonymous.get("/v1/projects")).status).toBe(401);
  });

  it("limits run creations per project, counting the runs of every key, and never refuses a replay", async () => {
    t = await startTestService({ env: { ASSURE_RUN_CREATES_PER_MINUTE: "2" } });
    const p = await seedProject(t, (await exampleAgent()).baseUrl);
    const body = { test_spec_id: p.testSpecId, environment_id: p.environmentId };
    const create = (client: typeof p.client, key: string) =>
      client.post("/v1/runs", body, { headers: { "idempotency-key": key } });
    expect((await create(p.client, "first")).status).toBe(201);
    expect((await create(t.admin, "second")).status).toBe(201);
    const refused = await create(p.client, "third");
    expectRateLimited(refused);
    expect(refused.body.error.message).toMatch(/runs created in this project/);
    expect(await count("runs")).toBe(2);
    const replay = await create(p.client, "first");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // The refused key was not consumed: once the budget allows, it creates the run.
    const q = await seedProject(t, (await exampleAgent()).baseUrl);
    expect(
      (
        await q.client.post(
          "/v1/runs",
          { test_spec_id: q.testSpecId, environment_id: q.environmentId },
          { headers: { "idempotency-key": "third" } },
        )
      ).status,
    ).toBe(201);
  });

  it("refuses a project's run beyond ASSURE_MAX_QUEUED_RUNS queued or running, but not a replay or another project's", async () => {
    t = await startTestService({ env: { ASSURE_MAX_QUEUED_RUNS: "2" } }); // the engine is off: runs stay queued
    const p = await seedProject(t, (await exampleAgent()).baseUrl);
    const q = await seedProject(t, (await exampleAgent()).baseUrl);
    const create = (s: typeof p, key: string) =>
      s.client.post(
        "/v1/runs",
        { test_spec_id: s.testSpecId, environment_id: s.environmentId },
        { headers: { "idempotency-key": key } },
      );
    expect((await create(p, "a")).status).toBe(201);
    expect((await create(p, "b")).status).toBe(201);
    const refused = await create(p, "c");
    expectRateLimited(refused, "RUN_QUOTA_EXCEEDED");
    expect(await count("runs")).toBe(2);
    expect((await create(p, "a")).status).toBe(200);
    expect((await create(q, "a")).status).toBe(201);
  });

  it("answers an oversized body with 413 PAYLOAD_TOO_LARGE: 64 KiB by default, 5 MiB for a spec", async () => {
    t = await startTestService();
    const big = await t.admin.post("/v1/projects", { name: "p", description: "x".repeat(64 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", retryable: false });
    expect(big.body.error.message).toContain(String(64 * 1024));
    expect(await count("projects")).toBe(0);
    // A spec route takes more: 100 KiB is read (and judged on its content, not its size).
    const spec = await t.admin.call("POST", "/v1/test-specs?project_id=prj_unknown", {
      body: `# ${"x".repeat(100 * 1024)}\nname: n\n`,
      contentType: "application/yaml",
    });
    expect(spec.status).not.toBe(413);
    const huge = await t.admin.call("POST", "/v1/test-specs?project_id=prj_unknown", {
      body: `# ${"x".repeat(5 * 1024 * 1024)}\n`,
      contentType: "application/yaml",
    });
    expect(huge.status).toBe(413);
  });

  it("honours ASSURE_MAX_BODY_BYTES", async () => {
    t = await startTestService({ env: { ASSURE_MAX_BODY_BYTES: "2048" } });
    expect((await t.admin.post("/v1/projects", { name: "p", description: "x".repeat(3000) })).status).toBe(413);
    expect((await t.admin.post("/v1/projects", { name: "p", description: "x".repeat(1000) })).status).toBe(201);
  });

  it("limits GitHub's webhook deliveries per address, with the envelope", async () => {
    t = await startTestService();
    let passed = 0;
    const server = createHttpServer({
      api: t.service.api,
      github: {
        path: "/api/github/webhooks",
        secret: "shh",
        middleware: async (_req, res) => void (passed++, res.writeHead(202).end()),
      },
      limits: { githubWebhooks: makeRateLimit(2) },
      newRequestId: () => "req_00000000000000000000000000",
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
      const delivery = {
        method: "POST",
        body: "{}",
        headers: {
          "x-github-event": "ping",
          "x-github-delivery": "d-1",
          "x-hub-signature-256": `sha256=${createHmac("sha256", "shh").update("{}").digest("hex")}`,
        },
      };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(url, delivery)).status);
      expect(statuses).toEqual([202, 202, 429]);
      expect(passed).toBe(2);
      const refused = await fetch(url, delivery);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await refused.json()).toMatchObject({
        error: { code: "RATE_LIMITED", retryable: true, request_id: "req_00000000000000000000000000" },
      });
      // The API behind the same port spends budgets of its own.
      expect((await fetch(url.replace("/api/github/webhooks", "/healthz"))).status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("closes the connection of a client too slow to send its headers (slowloris), and serves others", async () => {
    t = await startTestService({ env: { ASSURE_HEADERS_TIMEOUT_MS: "300", ASSURE_REQUEST_TIMEOUT_MS: "300" } });
    const { port } = new URL(t.baseUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () =>
        socket.write("GET /healthz HTTP/1.1\r\nHost: assure\r\nX-Slow: "),
      );
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString()));
      socket.on("close", () => resolve(received));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
  });
});
