import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startOidcIssuer, type ActionsTokenClaims, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const AUDIENCE = "https://assure.example.test";
const BOUND: ActionsTokenClaims = {
  repository: "acme/refunds",
  repository_id: "424242",
  workflow_ref: "acme/refunds/.github/workflows/assure.yml@refs/pull/7/merge",
  run_id: "9001",
  run_attempt: "1",
  actor: "octocat",
  sha: "a".repeat(40),
  event_name: "pull_request",
};

describe("secretless sign-in with GitHub OIDC", () => {
  let issuer: OidcIssuer;
  let clock: FakeClock;
  let t: TestService;
  let projectId: string;
  const now = () => clock.now().getTime() / 1000;
  const exchange = (token: string) => t.anonymous.post("/v1/auth/github-oidc", { token });

  beforeAll(async () => {
    issuer = await startOidcIssuer();
    clock = new FakeClock(Date.now());
    t = await startTestService({
      clock,
      env: {
        ASSURE_OIDC_ISSUER: issuer.issuer,
        ASSURE_OIDC_JWKS_URL: issuer.jwksUrl,
        ASSURE_OIDC_AUDIENCE: `${AUDIENCE}/`,
      },
    });
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "refunds",
        repositories: [{ github_id: 424242, full_name: "acme/refunds" }],
      })
    ).body.project_id;
  });
  afterAll(async () => {
    await t.close();
    await issuer.close();
  });

  it("exchanges a workflow's token for a key of the project that lists its repository, valid 15 minutes, that cannot waive", async () => {
    const signedIn = await exchange(await issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now() }));
    expect(signedIn.status).toBe(201);
    expect(signedIn.body).toMatchObject({
      project_id: projectId,
      scopes: [
        "runs:execute",
        "runs:read",
        "specs:write",
        "specs:read",
        "environments:read",
        "evidence:read",
        "releases:read",
        "releases:write",
      ],
      expires_at: new Date(clock.now().getTime() + 15 * 60_000).toISOString(),
    });
    const client = makeApiClient(t.baseUrl, undefined, signedIn.body.token);
    expect((await client.get("/v1/runs")).status).toBe(200);
    const waive = await client.post("/v1/release-decisions/dec_x/waivers", {
      run_id: "run_x",
      gate_id: "DET",
      reason: "ship it",
    });
    expect(waive.body.error).toMatchObject({
      code: "INSUFFICIENT_SCOPE",
      message: expect.stringContaining("releases:waive"),
    });
    // Recorded like other keys, with who asked for it.
    const key = (await t.service.store.listApiKeys()).find((k) => k.key_id === signedIn.body.key_id)!;
    expect(key).toMatchObject({
      project_id: projectId,
      expires_at: signedIn.body.expires_at,
      issued_for: {
        repository: "acme/refunds",
        repository_id: "424242",
        run_id: "9001",
        workflow_ref: BOUND.workflow_ref,
        actor: "octocat",
      },
    });

    clock.advance(15 * 60_000);
    const expired = await client.get("/v1/runs");
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
  });

  it("accepts the audience with or without a trailing slash", async () => {
    expect((await exchange(await issuer.sign(BOUND, { audience: `${AUDIENCE}/`, issuedAt: now() }))).status).toBe(201);
  });

  it("refuses a token that is not good, saying why", async () => {
    const cases: [string, Promise<string> | string][] = [
      ["wrong_audience", issuer.sign(BOUND, { audience: "https://elsewhere.example", issuedAt: now() })],
      ["expired", issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now() - 600, lifetimeS: 300 })],
      ["not_yet_valid", issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now(), notBefore: now() + 600 })],
      ["not_yet_valid", issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now() + 600 })],
      [
        "wrong_issuer",
        issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now(), iss: "https://token.actions.githubusercontent.com" }),
      ],
      [
        "invalid_signature",
        issuer
          .strangerKey()
          .then((key) => issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now(), signingKey: key })),
      ],
      [
        "invalid_signature",
        issuer
          .strangerKey()
          .then((key) =>
            issuer.sign(BOUND, { audience: AUDIENCE, issuedAt: now(), signingKey: key, keyId: "unknown-kid" }),
          ),
      ],
      [
        "repository_not_bound",
        issuer.sign(
          { ...BOUND, repository: "stranger/refunds", repository_id: "777" },
          { audience: AUDIENCE, issuedAt: now() },
        ),
      ],
      ["invalid_token", "not.a.jwt"],
    ];
    const keysBefore = (await t.service.store.listApiKeys()).length;
    for (const [reason, token] of cases) {
      const refused = await exchange(await token);
      expect([reason, refused.status]).toEqual([reason, 401]);
      expect(refused.body.error).toMatchObject({
        code: "UNAUTHENTICATED",
        retryable: false,
        details: [{ path: "body.token", reason }],
      });
    }
    expect(await t.service.store.listApiKeys()).toHaveLength(keysBefore);
  });

  it("is off, saying so, where no audience is configured", async () => {
    const plain = await startTestService();
    try {
      const refused = await plain.anonymous.post("/v1/auth/github-oidc", {
        token: await issuer.sign(BOUND, { audience: AUDIENCE }),
      });
      expect(refused.body.error).toMatchObject({ code: "UNAUTHENTICATED", details: [{ reason: "not_configured" }] });
    } finally {
      await plain.close();
    }
  });
});
