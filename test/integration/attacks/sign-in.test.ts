import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startOidcIssuer, type ActionsTokenClaims, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/**
 * The adversarial review's attacks on the workflows' secretless sign-in (issue: "The gate holds"):
 * a token seen once used again, repository ids GitHub never writes, and any workflow of a bound
 * repository signing in where a project wants only some.
 */
const AUDIENCE = "https://assure.example.test";
const CLAIMS: ActionsTokenClaims = {
  repository: "acme/strict",
  repository_id: "2002",
  ref: "refs/pull/9/merge",
  sha: "a".repeat(40),
  event_name: "pull_request",
  workflow_ref: "acme/strict/.github/workflows/assure.yml@refs/pull/9/merge",
  run_id: "77",
};

describe("attacks on GitHub OIDC sign-in", () => {
  let issuer: OidcIssuer;
  let t: TestService;
  let projectId: string;
  const exchange = async (claims: ActionsTokenClaims, options: { jti?: string | null } = {}) =>
    t.anonymous.post("/v1/auth/github-oidc", { token: await issuer.sign(claims, { audience: AUDIENCE, ...options }) });
  const keys = async () => (await t.service.store.listApiKeys()).length;

  beforeAll(async () => {
    issuer = await startOidcIssuer();
    t = await startTestService({
      env: { ASSURE_OIDC_ISSUER: issuer.issuer, ASSURE_OIDC_JWKS_URL: issuer.jwksUrl, ASSURE_OIDC_AUDIENCE: AUDIENCE },
    });
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "strict",
        repositories: [{ github_id: 2002, full_name: "acme/strict" }],
      })
    ).body.project_id;
  });
  afterAll(async () => {
    await t.close();
    await issuer.close();
  });

  describe("finding 10: a lax exchange", () => {
    it("exchanges one token once: the same token again, at once or later, gets nothing", async () => {
      const token = await issuer.sign(CLAIMS, { audience: AUDIENCE, jti: "jti-once" });
      const before = await keys();
      const answers = await Promise.all([1, 2, 3].map(() => t.anonymous.post("/v1/auth/github-oidc", { token })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401]);
      for (const refused of answers.filter((a) => a.status === 401)) {
        expect(refused.body.error.details).toEqual([expect.objectContaining({ reason: "token_reused" })]);
      }
      expect((await t.anonymous.post("/v1/auth/github-oidc", { token })).body.error.details[0].reason).toBe(
        "token_reused",
      );
      expect(await keys()).toBe(before + 1);
    });

    it("refuses a token without an id, and repository ids GitHub never writes", async () => {
      const before = await keys();
      expect((await exchange(CLAIMS, { jti: null })).body.error.details[0]).toMatchObject({ reason: "invalid_token" });
      for (const id of ["0x7d2", " 2002 ", "2002.0", "2e3", "+2002", "02002"]) {
        const refused = await exchange({ ...CLAIMS, repository_id: id });
        expect([id, refused.status, refused.body.error.details[0].reason]).toEqual([id, 401, "invalid_token"]);
      }
      expect(await keys()).toBe(before);
      expect((await exchange(CLAIMS)).status).toBe(201);
    });

    it("lets a project restrict sign-in to refs, events and workflows", async () => {
      const restricted = await t.admin.patch(`/v1/projects/${projectId}`, {
        oidc: {
          refs: ["refs/heads/main", "refs/pull/*/merge"],
          events: ["pull_request", "push"],
          workflows: ["acme/strict/.github/workflows/assure.yml@*"],
        },
      });
      expect(restricted.status).toBe(200);
      expect(restricted.body.oidc).toMatchObject({ events: ["pull_request", "push"] });
      expect((await exchange(CLAIMS)).status).toBe(201);
      expect(
        (
          await exchange({
            ...CLAIMS,
            ref: "refs/heads/main",
            event_name: "push",
            workflow_ref: "acme/strict/.github/workflows/assure.yml@refs/heads/main",
          })
        ).status,
      ).toBe(201);
      const before = await keys();
      for (const [claims, what] of [
        [{ ...CLAIMS, ref: "refs/heads/attacker" }, "its ref refs/heads/attacker"],
        [{ ...CLAIMS, event_name: "workflow_dispatch" }, "its event workflow_dispatch"],
        [
          { ...CLAIMS, workflow_ref: "acme/strict/.github/workflows/other.yml@refs/pull/9/merge" },
          "its workflow acme/strict/.github/workflows/other.yml",
        ],
      ] as const) {
        const refused = await exchange(claims);
        expect(refused.status).toBe(401);
        expect(refused.body.error).toMatchObject({
          details: [{ reason: "not_allowed" }],
          message: expect.stringContaining(what),
        });
      }
      expect(await keys()).toBe(before);
      expect((await t.admin.patch(`/v1/projects/${projectId}`, { oidc: null })).body.oidc).toBeNull();
      expect((await exchange({ ...CLAIMS, event_name: "workflow_dispatch" })).status).toBe(201);
    });
  });
});
