import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from "jose";

/** The claims GitHub puts in an Actions OIDC token, for a repository and a workflow run. */
export interface ActionsTokenClaims extends JWTPayload {
  repository: string;
  repository_id: string;
  repository_owner?: string;
  ref?: string;
  sha?: string;
  event_name?: string;
  workflow_ref?: string;
  run_id?: string;
  run_attempt?: string;
  actor?: string;
}

/**
 * A stand-in for GitHub Actions' OIDC provider on a real port, for tests and the demo: its JWKS at
 * `/.well-known/jwks`, and the token endpoint a runner's `ACTIONS_ID_TOKEN_REQUEST_URL` points at
 * (`GET /token?audience=…` with `Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`). Tokens are
 * RS256 JWTs signed with a key made here, for the claims the test sets.
 */
export async function startOidcIssuer() {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomBytes(6).toString("hex");
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const requestToken = randomBytes(16).toString("hex");
  let claims: ActionsTokenClaims | undefined;
  let runnerTokenOptions: { issuedAt?: number; lifetimeS?: number } = {};
  let issuer = "";
  const tokenRequests: { audience: string | null }[] = [];

  /** Signs a token; `overrides` can make it wrong on purpose (another issuer, expired…). */
  async function sign(
    payload: ActionsTokenClaims,
    {
      audience,
      issuedAt = Date.now() / 1000,
      lifetimeS = 300,
      notBefore,
      signingKey = privateKey,
      keyId = kid,
      iss = issuer,
      jti = randomUUID(),
    }: {
      audience: string;
      /** The token's id, fresh unless given; null leaves it out. */
      jti?: string | null;
      issuedAt?: number;
      lifetimeS?: number;
      notBefore?: number;
      signingKey?: CryptoKey;
      keyId?: string;
      iss?: string;
    },
  ): Promise<string> {
    const jwt = new SignJWT({ ...payload })
      .setProtectedHeader({ alg: "RS256", kid: keyId, typ: "JWT" })
      .setIssuer(iss)
      .setAudience(audience)
      .setSubject(`repo:${payload.repository}:ref:${payload.ref ?? "refs/heads/main"}`)
      .setIssuedAt(Math.floor(issuedAt))
      .setExpirationTime(Math.floor(issuedAt) + lifetimeS);
    if (notBefore !== undefined) jwt.setNotBefore(Math.floor(notBefore));
    if (jti !== null) jwt.setJti(jti);
    return jwt.sign(signingKey);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://issuer");
    if (req.method === "GET" && url.pathname === "/.well-known/jwks") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    if (req.method === "GET" && url.pathname === "/token") {
      tokenRequests.push({ audience: url.searchParams.get("audience") });
      if (req.headers.authorization !== `Bearer ${requestToken}` || !claims) {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ message: "Unauthorized" }));
        return;
      }
      void sign(claims, { audience: url.searchParams.get("audience") ?? "", ...runnerTokenOptions }).then((value) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ count: 1, value })),
      );
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    jwksUrl: `${issuer}/.well-known/jwks`,
    sign,
    tokenRequests,
    /** The claims of the tokens the runner's token endpoint hands out (and when they were issued, for how long). */
    setRunnerClaims(next: ActionsTokenClaims, options: { issuedAt?: number; lifetimeS?: number } = {}) {
      claims = next;
      runnerTokenOptions = options;
    },
    /** What a runner's environment holds when the job has `permissions: id-token: write`. */
    runnerEnv: {
      ACTIONS_ID_TOKEN_REQUEST_URL: `${issuer}/token?api-version=2.0`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken,
    },
    /** A key of the same kind that the issuer never published: its signatures must not verify. */
    async strangerKey(): Promise<CryptoKey> {
      return (await generateKeyPair("RS256")).privateKey;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type OidcIssuer = Awaited<ReturnType<typeof startOidcIssuer>>;
