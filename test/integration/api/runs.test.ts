import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { unusedBaseUrl } from "../../helpers/agent-endpoint.js";
import { runIdempotencyKey } from "../../../server/contract/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { startSeededService, type AgentEndpoint } from "../../helpers/seeded-service.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import type { TestService } from "../../helpers/service.js";

const HOUR = 3_600_000;

describe("runs", () => {
  let t: TestService;
  let clock: FakeClock;
  let agent: AgentEndpoint;
  let p: SeededProject;
  let close: () => Promise<void>;
  let body: { test_spec_id: string; environment_id: string };
  let keys = 0;
  const startRun = (json: unknown, key = `key-${++keys}`) =>
    p.client.post("/v1/runs", json, { headers: { "idempotency-key": key } });

  beforeAll(async () => {
    clock = new FakeClock();
    ({ t, agent, p, close } = await startSeededService({ clock }));
    body = { test_spec_id: p.testSpecId, environment_id: p.environmentId };
  });
  afterAll(() => close());

  it("creates a QUEUED run that records what is tested, where, and which agent version", async () => {
    const source = { repository: "acme/refunds", commit_sha: "a".repeat(40), ref: "refs/heads/main", pull_request: 12 };
    const response = await startRun({ ...body, source });
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toBe(`/v1/runs/${response.body.run_id}`);
    expect(response.body).toMatchObject({
      status: "QUEUED",
      verdict: "PENDING",
      failure: null,
      project_id: p.projectId,
      test_spec_id: p.testSpecId,
      spec_version: p.specVersion,
      environment_id: p.environmentId,
      agent_id: p.agentId,
      agent_version: "1.4.2",
      source,
      links: expect.objectContaining({
        self: `/v1/runs/${response.body.run_id}`,
        evidence: `/v1/runs/${response.body.run_id}/evidence`,
      }),
    });
    expect(response.body.run_id).toMatch(/^run_[0-9a-z]{26}$/);
    const read = await p.client.get(`/v1/runs/${response.body.run_id}`);
    expect(read.body).toEqual(response.body);
  });

  it("sends the environment's headers when probing the agent", async () => {
    const probe = agent.requests.find((r) => r.url === "/v1/models");
    expect(probe?.headers.authorization).toBe("Bearer agent-secret");
  });

  it("serves evidence with verdict PENDING and no gates while the run is not judged", async () => {
    const run = (await startRun(body)).body;
    const evidence = await p.client.get(`/v1/runs/${run.run_id}/evidence`);
    expect(evidence.status).toBe(200);
    expect(evidence.body).toMatchObject({
      run_id: run.run_id,
      spec_version: p.specVersion,
      agent_version: "1.4.2",
      environment: "staging",
      environment_id: p.environmentId,
      verdict: "PENDING",
      status: "QUEUED",
      gates: [],
    });
  });

  it("requires an Idempotency-Key, and refuses a malformed one", async () => {
    const missing = await p.client.post("/v1/runs", body);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    const missingWithBadBody = await p.client.post("/v1/runs", { surprise: 1 });
    expect(missingWithBadBody.body.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    const malformed = await startRun(body, "has spaces in it");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].path).toBe("headers.idempotency-key");
    expect((await startRun(body, "x".repeat(256))).status).toBe(400);
  });

  it("replays the same run for the same key and body, and refuses the key with another body", async () => {
    const first = await startRun(body, "sha-1/refund-agent");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const replay = await startRun(body, "sha-1/refund-agent");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const other = await startRun(
      { ...body, source: { repository: "acme/x", commit_sha: "b".repeat(40) } },
      "sha-1/refund-agent",
    );
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
  });

  it("creates exactly one run from 20 concurrent identical requests", async () => {
    const before = (await t.service.store.countRows()).runs;
    const responses = await Promise.all(Array.from({ length: 20 }, () => startRun(body, "concurrent-key")));
    const runIds = new Set(responses.map((r) => r.body.run_id));
    expect(runIds.size).toBe(1);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(19);
    expect((await t.service.store.countRows()).runs).toBe(before! + 1);
  });

  it("scopes keys to the project: another project may use the same key", async () => {
    const other = await seedProject(t, agent.baseUrl);
    const mine = await startRun(body, "shared-key");
    const theirs = await other.client.post(
      "/v1/runs",
      { test_spec_id: other.testSpecId, environment_id: other.environmentId },
      { headers: { "idempotency-key": "shared-key" } },
    );
    expect(theirs.status).toBe(201);
    expect(theirs.body.run_id).not.toBe(mine.body.run_id);
  });

  it("creates a new run once the key's 24 h window has passed", async () => {
    const first = await startRun(body, "windowed");
    clock.advance(23 * HOUR);
    expect((await startRun(body, "windowed")).body.run_id).toBe(first.body.run_id);
    clock.advance(1 * HOUR + 1);
    const later = await startRun(body, "windowed");
    expect(later.status).toBe(201);
    expect(later.body.run_id).not.toBe(first.body.run_id);
  });

  it("keeps a key derived from a commit for good: a replay years later finds the same run", async () => {
    const key = runIdempotencyKey({
      repositoryId: 42,
      commitSha: "b".repeat(40),
      specPath: ".assure/specs/refund.yaml",
      environmentName: "staging",
      attempt: 1,
    });
    const first = await startRun(body, key);
    expect(first.status).toBe(201);
    clock.advance(3 * 365 * 24 * HOUR);
    const replay = await startRun(body, key);
    expect(replay.status).toBe(200);
    expect(replay.body.run_id).toBe(first.body.run_id);
  });

  it("answers 503 ENVIRONMENT_NOT_READY, retryable, when the agent entrypoint is down, without using the key", async () => {
    agent.setHealthy(false);
    clock.advance(HOUR); // past the readiness cache
    const before = await t.service.store.countRows();
    const refused = await startRun(body, "while-down");
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: "ENVIRONMENT_NOT_READY", retryable: true });
    expect(refused.body.error.message).toContain("HTTP 503");
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await t.service.store.countRows()).toEqual(before);

    agent.setHealthy(true);
    clock.advance(HOUR);
    const accepted = await startRun(body, "while-down");
    expect(accepted.status).toBe(201);
  });

  it("answers 503 when nothing listens at the environment's address", async () => {
    const environment = await p.client.post("/v1/environments", {
      name: "nowhere",
      agent_id: p.agentId,
      endpoint: { protocol: "openai-chat", base_url: await unusedBaseUrl() },
    });
    const refused = await startRun({ ...body, environment_id: environment.body.environment_id });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("ENVIRONMENT_NOT_READY");
  });

  it("pins a spec version when asked, and 404s an unknown one", async () => {
    const pinned = await startRun({ ...body, spec_version: p.specVersion });
    expect(pinned.body.spec_version).toBe(p.specVersion);
    const unknown = await startRun({ ...body, spec_version: "sha256:" + "0".repeat(64) });
    expect(unknown.status).toBe(404);
  });

  it("answers 404 for unknown runs and specs", async () => {
    expect((await p.client.get("/v1/runs/run_00000000000000000000000000")).status).toBe(404);
    expect((await p.client.get("/v1/runs/run_00000000000000000000000000/evidence")).status).toBe(404);
    expect((await startRun({ ...body, test_spec_id: "tsp_missing" })).status).toBe(404);
    expect((await startRun({ ...body, environment_id: "env_missing" })).status).toBe(404);
  });
});
