import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startAgentEndpoint, type AgentEndpoint } from "../../helpers/agent-endpoint.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * The adversarial review's attacks on what the service sends out (issue: "The gate holds"): a key
 * with environments:write redirecting an agent's credentials, and agent or webhook URLs aimed at
 * the service's own network.
 */
describe("attacks on what the service sends out", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let elsewhere: AgentEndpoint;
  let p: SeededProject;

  beforeAll(async () => {
    t = await startTestService();
    agent = await startExampleAgent();
    elsewhere = await startAgentEndpoint();
    p = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([agent.close(), elsewhere.close()]);
  });

  describe("finding 5: credentials never follow a URL", () => {
    it("refuses to move an environment's agent, or widen where runs may call it, without its headers given again; the new host never sees them", async () => {
      const before = (await p.client.get(`/v1/environments/${p.environmentId}`)).body;
      expect(before.endpoint.header_names).toEqual(["authorization"]);
      const newOrigin = new URL(elsewhere.baseUrl).origin;
      for (const endpoint of [
        { base_url: elsewhere.baseUrl },
        { url_pattern: `${new URL(agent.baseUrl).origin}/*` },
        { base_url: elsewhere.baseUrl, url_pattern: `${newOrigin}/*` },
      ]) {
        const moved = await p.client.patch(`/v1/environments/${p.environmentId}`, { endpoint });
        expect(moved.status).toBe(422);
        expect(moved.body.error).toMatchObject({
          code: "HEADERS_REQUIRED",
          details: [{ path: "body.endpoint.headers" }],
        });
      }
      expect((await p.client.get(`/v1/environments/${p.environmentId}`)).body).toEqual(before);
      const run = await p.client.post(
        "/v1/runs",
        { test_spec_id: p.testSpecId, environment_id: p.environmentId },
        { headers: { "idempotency-key": "still-home" } },
      );
      expect(run.status).toBe(201);
      expect(elsewhere.requests).toEqual([]);

      // Moved with its headers cleared: the new host is called without them.
      const cleared = await p.client.patch(`/v1/environments/${p.environmentId}`, {
        endpoint: { base_url: elsewhere.baseUrl, headers: {} },
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body.endpoint.header_names).toEqual([]);
      await p.client.post(
        "/v1/runs",
        { test_spec_id: p.testSpecId, environment_id: p.environmentId },
        { headers: { "idempotency-key": "moved" } },
      );
      expect(elsewhere.requests.length).toBeGreaterThan(0);
      expect(elsewhere.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
      // Other changes need nothing more: the headers stay where they are.
      expect(
        (
          await p.client.patch(`/v1/environments/${p.environmentId}`, {
            endpoint: { base_url: agent.baseUrl, headers: { authorization: "Bearer again" } },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await p.client.patch(`/v1/environments/${p.environmentId}`, {
            endpoint: { model: "refund-agent", max_concurrency: 4 },
          })
        ).status,
      ).toBe(200);
    });
  });

  describe("finding 9: egress closed by default", () => {
    it("refuses this machine, its own addresses, metadata names and tunnelled forms as agents and webhook receivers unless the allowlist opens them", async () => {
      const closed = await startTestService({ env: { ASSURE_EGRESS_ALLOWLIST: "" } });
      try {
        const q = await seedProject(closed, "http://agent.internal/v1");
        const { port } = new URL(closed.baseUrl);
        const ownAddress = Object.values(networkInterfaces())
          .flat()
          .find((entry) => entry && !entry.internal && entry.family === "IPv4")?.address;
        const targets = [
          `http://127.0.0.1:${port}/v1`, // the service itself
          `http://localhost:${port}/v1`,
          `http://127.1.2.3/v1`,
          `http://[::1]:${port}/v1`,
          `http://[::ffff:127.0.0.1]:${port}/v1`,
          "http://[::ffff:0:a9fe:a9fe]/v1",
          "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/v1",
          "http://metadata.google.internal./computeMetadata/v1",
          "http://instance-data./latest",
          ...(ownAddress ? [`http://${ownAddress}:${port}/v1`] : []),
        ];
        const environments = (await q.client.get("/v1/environments")).body.data.length;
        for (const base_url of targets) {
          const refused = await q.client.post("/v1/environments", {
            name: `probe-${environments}`,
            agent_id: q.agentId,
            endpoint: { protocol: "openai-chat", base_url },
          });
          expect([base_url, refused.status]).toEqual([base_url, 400]);
          expect(refused.body.error.details[0]).toMatchObject({
            path: "body.endpoint.base_url",
            message: expect.stringMatching(/^not allowed: /),
          });
          const hook = await closed.admin.post("/v1/webhooks", {
            project_id: q.projectId,
            url: base_url.replace(/^http:/, "https:"),
            event_types: ["run.status_changed"],
          });
          expect([base_url, hook.status]).toEqual([base_url, 400]);
        }
        expect((await q.client.get("/v1/environments")).body.data).toHaveLength(environments);
      } finally {
        await closed.close();
      }
    });
  });
});
