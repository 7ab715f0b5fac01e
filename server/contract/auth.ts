import { z } from "zod";
import { Timestamp } from "./common.js";

/** Why a GitHub OIDC token was refused: `error.details[].reason` of the 401. */
export const OIDC_REFUSALS = [
  "invalid_token",
  "invalid_signature",
  "wrong_issuer",
  "wrong_audience",
  "expired",
  "not_yet_valid",
  "repository_not_bound",
  "not_configured",
  "token_reused",
  "not_allowed",
] as const;
export type OidcRefusal = (typeof OIDC_REFUSALS)[number];

export const GitHubOidcExchangeBody = z
  .strictObject({
    token: z
      .string()
      .min(1)
      .max(16_384)
      .describe("A GitHub Actions OIDC token (JWT) requested for this service's audience"),
  })
  .meta({ id: "GitHubOidcExchangeBody" });

export const ShortLivedKey = z
  .object({
    token: z.string().describe("The API key: send it as 'Authorization: Bearer <token>'. Shown once."),
    key_id: z.string(),
    project_id: z.string().describe("The project that lists the workflow's repository"),
    scopes: z.array(z.string()).describe("What a workflow may do; never releases:waive"),
    expires_at: Timestamp,
  })
  .meta({ id: "ShortLivedKey" });
export type ShortLivedKey = z.infer<typeof ShortLivedKey>;
