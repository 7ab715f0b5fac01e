import { GitHubOidcExchangeBody, ShortLivedKey } from "../../contract/index.js";
import { exchangeGitHubOidcToken } from "../../auth/exchange-oidc-token.js";
import type { Api, ApiDeps } from "../context.js";
import { responses } from "../schemas.js";

export function registerAuthRoutes(api: Api, deps: ApiDeps) {
  api.post("/v1/auth/github-oidc", {
    config: { creates: "key_id", errors: ["UNAUTHENTICATED"] },
    schema: {
      operationId: "exchangeGitHubOidcToken",
      tags: ["auth"],
      summary: "Exchange a GitHub Actions OIDC token for a project key valid 15 minutes (no key needed)",
      security: [],
      body: GitHubOidcExchangeBody,
      response: responses({ 201: ShortLivedKey }),
    },
    handler: async (request, reply) => reply.code(201).send(await exchangeGitHubOidcToken(deps, request.body.token)),
  });
}
