import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";
import type { Clock } from "../clock.js";
import type { OidcRefusal } from "../contract/index.js";

/** What a GitHub Actions OIDC token says of the workflow run that asked for it (the claims assure reads). */
export interface GitHubOidcClaims extends JWTPayload {
  /** The token's own id: it is exchanged once. */
  jti: string;
  exp: number;
  repository: string;
  /** Decimal digits: the repository's numeric id. */
  repository_id: string;
  ref?: string;
  workflow_ref?: string;
  run_id?: string;
  run_attempt?: string;
  actor?: string;
  sha?: string;
  event_name?: string;
}

export class OidcRefusedError extends Error {
  override name = "OidcRefusedError";
  constructor(
    readonly reason: OidcRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** Leeway on exp, nbf and iat: runners' clocks drift. */
const LEEWAY_S = 60;

export interface OidcSettings {
  issuer: string;
  jwksUrl: string;
  audience: string;
}

/**
 * Verifies GitHub Actions OIDC tokens with jose: RS256 by `kid` against the issuer's JWKS (cached,
 * fetched again on an unknown `kid`), `iss` exact, `aud` this service's audience (with or without a
 * trailing slash), `exp`, `nbf` and `iat` with a minute's leeway. Throws OidcRefusedError saying
 * which check failed; other errors (the JWKS cannot be fetched) are the service's own.
 */
export function makeOidcVerifier({ issuer, jwksUrl, audience }: OidcSettings, clock: Clock) {
  const keys = createRemoteJWKSet(new URL(jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
  return async function verifyOidcToken(token: string): Promise<GitHubOidcClaims> {
    const now = clock.now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        audience: [audience, `${audience}/`],
        algorithms: ["RS256"],
        clockTolerance: LEEWAY_S,
        currentDate: now,
        requiredClaims: ["exp", "iat", "jti", "repository_id", "repository"],
      }));
    } catch (error) {
      throw refusal(error, { issuer, audience });
    }
    if (typeof payload.iat === "number" && payload.iat > now.getTime() / 1000 + LEEWAY_S) {
      throw new OidcRefusedError("not_yet_valid", "The token was issued in the future (iat).");
    }
    if (typeof payload.repository_id !== "string" || typeof payload.repository !== "string") {
      throw new OidcRefusedError(
        "invalid_token",
        "The token does not name its repository (repository, repository_id).",
      );
    }
    // GitHub writes the id as decimal digits: anything else ("0x7d2", " 2002 ", "2002.0") is not its token.
    if (!/^[1-9]\d{0,19}$/.test(payload.repository_id)) {
      throw new OidcRefusedError("invalid_token", "The token's repository_id is not a repository id (decimal digits).");
    }
    if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 200) {
      throw new OidcRefusedError("invalid_token", "The token has no usable id (jti).");
    }
    return payload as GitHubOidcClaims;
  };
}

export type VerifyOidcToken = ReturnType<typeof makeOidcVerifier>;

function refusal(error: unknown, expected: { issuer: string; audience: string }): unknown {
  if (error instanceof errors.JWTExpired) return new OidcRefusedError("expired", "The token has expired (exp).");
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return new OidcRefusedError("wrong_issuer", `The token was not issued by ${expected.issuer} (iss).`);
      case "aud":
        return new OidcRefusedError(
          "wrong_audience",
          `The token is not for ${expected.audience} (aud): request it with that audience.`,
        );
      case "nbf":
        return new OidcRefusedError("not_yet_valid", "The token is not valid yet (nbf).");
      default:
        return new OidcRefusedError(
          "invalid_token",
          `The token's claim '${error.claim}' is missing or wrong: ${error.message}.`,
        );
    }
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JOSEAlgNotAllowed
  ) {
    return new OidcRefusedError(
      "invalid_signature",
      "The token's signature does not verify against the issuer's keys.",
    );
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return new OidcRefusedError("invalid_token", "The token is not a signed JWT.");
  }
  return error;
}
