import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startOidcIssuer, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { parseToken } from "../../../server/auth/api-keys.js";
import { ADMIN_ONLY_SCOPES, SCOPES } from "../../../server/auth/scopes.js";
import type { ApiClient, ApiResponse } from "../../helpers/api-client.js";
import { waitForRun } from "../../helpers/runs.js";
import { uploadOf } from "../../helpers/uploads.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

const AUDIENCE = "https://assure.example.test";
const REPOSITORY = { github_id: 424242, full_name: "acme/refunds" };
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** What a write left, to be found in the trail: the resource it names and who asked. */
interface Written {
  response: ApiResponse;
  resourceId: string;
  actor: { type: "api_key"; keyId: string } | { type: "github_oidc" };
}

/**
 * Every route that writes, as registered (the route table): one successful call each, and each
 * leaves exactly one audit event naming its operation, its resource, who asked, the request and
 * the address. A route added without a call here fails the first test, so none goes unaudited.
 */
describe("an audit event for every write route", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let receiver: WebhookReceiver;
  let issuer: OidcIssuer;

  beforeAll(async () => {
    issuer = await startOidcIssuer();
    t = await startTestService({
      env: {
        ASSURE_WORKERS: "2",
        ASSURE_OIDC_ISSUER: issuer.issuer,
        ASSURE_OIDC_JWKS_URL: issuer.jwksUrl,
        ASSURE_OIDC_AUDIENCE: AUDIENCE,
      },
    });
    agent = await startExampleAgent();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
    await receiver.close();
    await issuer.close();
  });

  // The conversations' MCP servers write a run's evidence through the engine, not the API's resources: not audited.
  const writeRoutes = () => t.service.api.routeTable.filter((route) => WRITES.has(route.method) && route.audited);
  const keyOf = (token: string) => parseToken(token)!.keyId;

  /** The ids the calls make, for the calls after them. */
  const made: Record<string, string> = {};
  let owner: ApiClient;
  let ownerKeyId: string;
  let reviewer: ApiClient;
  let reviewerKeyId: string;
  const byOwner = (response: ApiResponse, resourceId: string): Written => ({
    response,
    resourceId,
    actor: { type: "api_key", keyId: ownerKeyId },
  });
  const byReviewer = (response: ApiResponse, resourceId: string): Written => ({
    response,
    resourceId,
    actor: { type: "api_key", keyId: reviewerKeyId },
  });

  /** A commit's run in an environment, ended, then the commit's decision. */
  async function decidedCommit(sha: string, environmentId: string, extra: Record<string, unknown> = {}) {
    const run = await owner.post(
      "/v1/runs",
      {
        test_spec_id: made.test_spec_id,
        environment_id: environmentId,
        source: { repository: REPOSITORY.full_name, commit_sha: sha },
      },
      { headers: { "idempotency-key": `run-${sha}` } },
    );
    expect(run.status).toBe(201);
    await waitForRun(owner, run.body.run_id);
    const plan = [{ test_spec_id: made.test_spec_id, environment_id: environmentId }];
    const decision = await owner.post("/v1/release-decisions", {
      subject: { repository: REPOSITORY.full_name, commit_sha: sha },
      plan,
      ...extra,
    });
    expect(decision.status).toBe(201);
    return { runId: run.body.run_id as string, decisionId: decision.body.decision_id as string };
  }

  /** One successful call per write operation, in an order where each finds what it needs. */
  const calls: [operationId: string, call: () => Promise<Written>][] = [
    [
      "createProject",
      async () => {
        const response = await t.admin.post("/v1/projects", { name: "audited", repositories: [REPOSITORY] });
        made.project_id = response.body.project_id;
        const ownerToken = await t.issueKey(
          made.project_id!,
          SCOPES.filter((scope) => !ADMIN_ONLY_SCOPES.includes(scope)),
        );
        [owner, ownerKeyId] = [t.admin.withToken(ownerToken), keyOf(ownerToken)];
        const reviewerToken = await t.issueKey(made.project_id!, ["releases:read", "releases:waive"]);
        [reviewer, reviewerKeyId] = [t.admin.withToken(reviewerToken), keyOf(reviewerToken)];
        return { response, resourceId: made.project_id!, actor: { type: "api_key", keyId: keyOf(t.adminToken) } };
      },
    ],
    [
      "updateProject",
      async () => ({
        response: await t.admin.patch(`/v1/projects/${made.project_id}`, { description: "every write audited" }),
        resourceId: made.project_id!,
        actor: { type: "api_key", keyId: keyOf(t.adminToken) },
      }),
    ],
    [
      "createAgent",
      async () => {
        const response = await owner.post("/v1/agents", { name: "refund-agent", version: "1.4.2" });
        return byOwner(response, (made.agent_id = response.body.agent_id));
      },
    ],
    [
      "createEnvironment",
      async () => {
        const endpoint = { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" };
        const response = await owner.post("/v1/environments", { name: "staging", agent_id: made.agent_id, endpoint });
        // A second one, whose agent calls the wrong tool: its runs fail the gate a waiver needs.
        made.sloppy_environment_id = (
          await owner.post("/v1/environments", {
            name: "sloppy",
            agent_id: made.agent_id,
            endpoint: { ...endpoint, model: "refund-agent+wrong-arguments" },
          })
        ).body.environment_id;
        return byOwner(response, (made.environment_id = response.body.environment_id));
      },
    ],
    [
      "updateEnvironment",
      async () =>
        byOwner(
          await owner.patch(`/v1/environments/${made.environment_id}`, { endpoint: { max_concurrency: 2 } }),
          made.environment_id!,
        ),
    ],
    [
      "createTestSpec",
      async () => {
        const response = await owner.call("POST", "/v1/test-specs", {
          body: deterministicSpecYaml({ repeat: 1 }),
          contentType: "application/yaml",
        });
        return byOwner(response, (made.test_spec_id = response.body.test_spec_id));
      },
    ],
    [
      "createWebhook",
      async () => {
        const response = await owner.post("/v1/webhooks", { url: receiver.url });
        return byOwner(response, (made.webhook_id = response.body.webhook_id));
      },
    ],
    [
      "updateWebhook",
      async () =>
        byOwner(await owner.patch(`/v1/webhooks/${made.webhook_id}`, { description: "audited" }), made.webhook_id!),
    ],
    [
      "rotateWebhookSecret",
      async () => byOwner(await owner.post(`/v1/webhooks/${made.webhook_id}/rotate-secret`, {}), made.webhook_id!),
    ],
    [
      "createRun",
      async () => {
        const response = await owner.post(
          "/v1/runs",
          { test_spec_id: made.test_spec_id, environment_id: made.environment_id },
          { headers: { "idempotency-key": "every-write" } },
        );
        made.run_id = response.body.run_id;
        await waitForRun(owner, made.run_id!);
        return byOwner(response, made.run_id!);
      },
    ],
    [
      "uploadRun",
      async () => {
        const response = await owner.post("/v1/runs/uploads", await uploadOf(owner, made.run_id!), {
          headers: { "idempotency-key": "every-write-upload" },
        });
        await waitForRun(owner, response.body.run_id);
        return byOwner(response, response.body.run_id);
      },
    ],
    [
      "createReleaseDecision",
      async () => {
        const response = await owner.post("/v1/release-decisions", {
          subject: { repository: REPOSITORY.full_name, commit_sha: "a".repeat(40) },
          plan: [{ test_spec_id: made.test_spec_id, environment_id: made.environment_id }],
        });
        return byOwner(response, (made.decision_id = response.body.decision_id));
      },
    ],
    [
      "startReleaseDecisionAttempt",
      async () =>
        byOwner(await owner.post(`/v1/release-decisions/${made.decision_id}/attempts`, {}), made.decision_id!),
    ],
    [
      "createWaiver",
      async () => {
        // A commit whose run fails the gate DET and whose head relaxes the policy: both need a reviewer.
        const policy_changes = [
          {
            kind: "removed",
            where: "refund-agent-deterministic: scenarios[1]",
            message: "the scenario 'unknown-order' is removed",
          },
        ];
        const blocked = await decidedCommit("b".repeat(40), made.sloppy_environment_id!, {
          base: {
            ref: "main",
            commits: [{ sha: "c".repeat(40), committed_at: "2026-11-20T00:00:00Z" }],
            policy_changes,
          },
        });
        made.blocked_decision_id = blocked.decisionId;
        await waitFor(
          async () => (await owner.get(`/v1/release-decisions/${blocked.decisionId}`)).body.status === "BLOCKED",
          "the decision to block",
        );
        const response = await reviewer.post(`/v1/release-decisions/${blocked.decisionId}/waivers`, {
          run_id: blocked.runId,
          gate_id: "DET",
          reason: "Known issue ACME-12.",
        });
        return byReviewer(response, (made.waiver_id = response.body.waiver_id));
      },
    ],
    [
      "revokeWaiver",
      async () => {
        const response = await reviewer.post(
          `/v1/release-decisions/${made.blocked_decision_id}/waivers/${made.waiver_id}/revocations`,
          { reason: "Not known after all." },
        );
        expect(response.body.revokes).toBe(made.waiver_id);
        return byReviewer(response, response.body.waiver_id);
      },
    ],
    [
      "approvePolicyChanges",
      async () => {
        const response = await reviewer.post(`/v1/release-decisions/${made.blocked_decision_id}/policy-approvals`, {
          reason: "The scenario moved to another spec.",
        });
        return byReviewer(response, response.body.approval_id);
      },
    ],
    [
      "redeliverWebhookDelivery",
      async () => {
        const delivery = await waitFor(
          async () =>
            (await owner.get(`/v1/webhooks/${made.webhook_id}/deliveries?limit=1`)).body.data[0]?.delivery_id as
              string | undefined,
          "a delivery",
        );
        return byOwner(
          await owner.post(`/v1/webhooks/${made.webhook_id}/deliveries/${delivery}/redeliver`, {}),
          delivery,
        );
      },
    ],
    [
      "recoverWebhook",
      async () =>
        byOwner(
          await owner.post(`/v1/webhooks/${made.webhook_id}/recover`, {
            since: new Date(Date.now() - 3_600_000).toISOString(),
          }),
          made.webhook_id!,
        ),
    ],
    ["deleteWebhook", async () => byOwner(await owner.delete(`/v1/webhooks/${made.webhook_id}`), made.webhook_id!)],
    [
      "exchangeGitHubOidcToken",
      async () => {
        const token = await issuer.sign(
          {
            repository: REPOSITORY.full_name,
            repository_id: String(REPOSITORY.github_id),
            run_id: "9001",
            actor: "octocat",
          },
          { audience: AUDIENCE },
        );
        const response = await t.anonymous.post("/v1/auth/github-oidc", { token });
        return { response, resourceId: response.body.key_id, actor: { type: "github_oidc" } };
      },
    ],
  ];

  it("has a call for every write route of the route table", () => {
    const operationIds = writeRoutes().map((route) => route.operationId ?? `${route.method} ${route.url}`);
    expect(calls.map(([operationId]) => operationId).sort()).toEqual([...operationIds].sort());
  });

  it("appends exactly one event per successful write, naming the operation, the resource, the actor, the request and the address", async () => {
    const allEvents = async () => {
      const events: Record<string, unknown>[] = [];
      let cursor: string | null = null;
      do {
        const page: ApiResponse = await t.admin.get(
          `/v1/audit-events?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        events.push(...page.body.data);
        cursor = page.body.next_cursor;
      } while (cursor);
      return events;
    };
    for (const [operationId, call] of calls) {
      const { response, resourceId, actor } = await call();
      expect([operationId, response.status < 300 ? "succeeded" : response.text]).toEqual([operationId, "succeeded"]);
      // A call may make other writes first (a run to waive, say): each has its own request id.
      const ofRequest = (await allEvents()).filter(
        (event) => event.request_id === response.headers.get("x-request-id"),
      );
      expect(ofRequest).toEqual([
        expect.objectContaining({
          action: operationId,
          resource_id: resourceId,
          project_id: made.project_id,
          client_address: "127.0.0.1",
          actor: expect.objectContaining(
            actor.type === "api_key" ? { type: "api_key", key_id: actor.keyId } : { type: "github_oidc", key_id: null },
          ),
        }),
      ]);
    }
  });
});
