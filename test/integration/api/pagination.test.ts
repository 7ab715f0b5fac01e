import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startSeededService, type AgentEndpoint } from "../../helpers/seeded-service.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import type { TestService } from "../../helpers/service.js";

describe("run list pagination and filters", () => {
  let t: TestService;
  let agent: AgentEndpoint;
  let p: SeededProject;
  let close: () => Promise<void>;
  let created: string[] = [];
  let productionId: string;

  beforeAll(async () => {
    ({ t, agent, p, close } = await startSeededService());
    const production = await p.client.post("/v1/environments", {
      name: "production",
      agent_id: p.agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl },
    });
    productionId = production.body.environment_id;
    for (let i = 0; i < 130; i++) {
      const environment_id = i % 10 === 0 ? productionId : p.environmentId;
      const run = await p.client.post(
        "/v1/runs",
        { test_spec_id: p.testSpecId, environment_id },
        { headers: { "idempotency-key": `run-${i}` } },
      );
      created.push(run.body.run_id);
    }
    // The engine is off; every fifth run is marked FAILED by hand, through a connection of its own.
    await t.withStore(async (store) => {
      const markFailed = store.sql.prepare("UPDATE runs SET status = 'FAILED', verdict = 'ERROR' WHERE run_id = ?");
      for (const id of created.filter((_, i) => i % 5 === 0)) await markFailed.run(id);
    });
    created = created.reverse(); // newest first
  });
  afterAll(() => close());

  async function walk(query: string, limit: number): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { run_id: string }[]; next_cursor: string | null; has_more: boolean } } =
        await p.client.get(`/v1/runs?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      seen.push(...page.body.data.map((r) => r.run_id));
      expect(page.body.has_more).toBe(page.body.next_cursor !== null);
      cursor = page.body.next_cursor;
    } while (cursor);
    return seen;
  }

  /** The created runs (newest first) whose stored row satisfies `test`. */
  async function createdWhere(test: (run: { status: string; environment_id: string }) => boolean): Promise<string[]> {
    const matching: string[] = [];
    for (const id of created) {
      const run = await t.service.store.getRun(id);
      if (run && test(run)) matching.push(id);
    }
    return matching;
  }

  it("defaults to 50 per page, newest first", async () => {
    const page = await p.client.get("/v1/runs");
    expect(page.body.data).toHaveLength(50);
    expect(page.body.data.map((r: { run_id: string }) => r.run_id)).toEqual(created.slice(0, 50));
    expect(page.body.has_more).toBe(true);
  });

  it("walks every run exactly once, in order, across pages", async () => {
    expect(await walk("", 7)).toEqual(created);
    expect(await walk("", 200)).toEqual(created);
  });

  it.each(["0", "201", "-1", "1.5", "ten", ""])("refuses limit=%s with 400", async (limit) => {
    const response = await p.client.get(`/v1/runs?limit=${limit}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("VALIDATION_FAILED");
    expect(response.body.error.details[0].path).toBe("query.limit");
  });

  it("filters by status, case-insensitively", async () => {
    const failed = await createdWhere((run) => run.status === "FAILED");
    expect(failed.length).toBe(26);
    expect(await walk("&status=failed", 10)).toEqual(failed);
    expect(await walk("&status=FAILED", 10)).toEqual(failed);
    expect(await walk("&status=running", 10)).toEqual([]);
    const bogus = await p.client.get("/v1/runs?status=broken");
    expect(bogus.status).toBe(400);
    expect(bogus.body.error.details[0].path).toBe("query.status");
  });

  it("filters by environment id or name, combined with status", async () => {
    const inProduction = await createdWhere((run) => run.environment_id === productionId);
    expect(inProduction).toHaveLength(13);
    expect(await walk(`&environment=${productionId}`, 5)).toEqual(inProduction);
    expect(await walk("&environment=production", 5)).toEqual(inProduction);
    const both = await createdWhere((run) => run.environment_id === productionId && run.status === "FAILED");
    expect(await walk("&environment=production&status=failed", 5)).toEqual(both);
    expect(await walk("&environment=nowhere", 5)).toEqual([]);
  });

  it("refuses a tampered cursor", async () => {
    const cursor: string = (await p.client.get("/v1/runs?limit=5")).body.next_cursor;
    const [payload, signature] = cursor.split(".");
    const moved = Buffer.from(
      JSON.stringify(["2099-01-01T00:00:00.000Z", "run_zzzzzzzzzzzzzzzzzzzzzzzzzz", "runs|" + p.projectId + "||"]),
    ).toString("base64url");
    for (const bad of [`${moved}.${signature}`, `${payload}.AAAA${signature!.slice(4)}`, "garbage", `${cursor}.x`]) {
      const response = await p.client.get(`/v1/runs?limit=5&cursor=${encodeURIComponent(bad)}`);
      expect(response.status).toBe(400);
      expect(response.body.error.details[0].path).toBe("query.cursor");
    }
  });

  it("refuses a cursor with other filters or on another list", async () => {
    const cursor: string = (await p.client.get("/v1/runs?limit=5&status=failed")).body.next_cursor;
    const q = encodeURIComponent(cursor);
    expect((await p.client.get(`/v1/runs?limit=5&status=failed&cursor=${q}`)).status).toBe(200);
    expect((await p.client.get(`/v1/runs?limit=5&cursor=${q}`)).status).toBe(400);
    expect((await p.client.get(`/v1/runs?limit=5&status=queued&cursor=${q}`)).status).toBe(400);
    expect((await p.client.get(`/v1/agents?limit=5&cursor=${q}`)).status).toBe(400);
  });

  it("shows an admin key every project's runs unless it names one", async () => {
    const other = await seedProject(t, agent.baseUrl);
    await other.client.post(
      "/v1/runs",
      { test_spec_id: other.testSpecId, environment_id: other.environmentId },
      { headers: { "idempotency-key": "o" } },
    );
    const all = await t.admin.get("/v1/runs?limit=200");
    expect(all.body.data).toHaveLength(131);
    const one = await t.admin.get(`/v1/runs?limit=200&project_id=${other.projectId}`);
    expect(one.body.data).toHaveLength(1);
    expect((await p.client.get("/v1/runs?limit=200")).body.data).toHaveLength(130);
  });
});
