import type { Clock } from "../clock.js";
import type { ShortLivedKey } from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { NewId } from "../ids.js";
import type { ServiceStore } from "../store/service-store.js";
import picomatch from "picomatch";
import type { ProjectOidc } from "../contract/index.js";
import { OidcRefusedError, type GitHubOidcClaims, type VerifyOidcToken } from "./github-oidc.js";
import { newApiKey } from "./issue-api-key.js";
import type { Scope } from "./scopes.js";

/** What a workflow may do with its key: run and read, decide releases — never waive its own gate. */
export const WORKFLOW_SCOPES = [
  "runs:execute",
  "runs:read",
  "specs:write",
  "specs:read",
  "environments:read",
  "evidence:read",
  "releases:read",
  "releases:write",
] as const satisfies readonly Scope[];

export const WORKFLOW_KEY_MS = 15 * 60_000;

export interface ExchangeDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  verifyOidcToken?: VerifyOidcToken | undefined;
}

/** Which of the project's restrictions (ref, event, workflow) the token's run does not meet, if one. */
function unmetRestriction(oidc: ProjectOidc | null, claims: GitHubOidcClaims): string | undefined {
  if (!oidc) return undefined;
  const matches = (globs: readonly string[], value: string | undefined) =>
    value !== undefined && picomatch.isMatch(value, globs as string[], { dot: true, bash: true });
  if (oidc.refs && !matches(oidc.refs, claims.ref)) {
    return `its ref ${claims.ref ?? "(none)"} matches none of ${oidc.refs.join(", ")}`;
  }
  if (oidc.events && !oidc.events.includes(claims.event_name ?? "")) {
    return `its event ${claims.event_name ?? "(none)"} is none of ${oidc.events.join(", ")}`;
  }
  if (oidc.workflows && !matches(oidc.workflows, claims.workflow_ref)) {
    return `its workflow ${claims.workflow_ref ?? "(none)"} matches none of ${oidc.workflows.join(", ")}`;
  }
  return undefined;
}

/**
 * A workflow's secretless sign-in: its GitHub OIDC token, verified, is exchanged for a key of the
 * project that lists the token's repository (by id, never by parsing `sub`), valid 15 minutes,
 * recorded with the repository, workflow and run that asked. Refusals are 401 with the reason.
 */
export async function exchangeGitHubOidcToken(
  { store, clock, newId, verifyOidcToken }: ExchangeDeps,
  token: string,
): Promise<ShortLivedKey> {
  const refuse = (reason: string, message: string) =>
    new ApiError("UNAUTHENTICATED", {
      message,
      details: [{ path: "body.token", message, reason }],
      headers: { "WWW-Authenticate": 'Bearer realm="assure"' },
    });
  if (!verifyOidcToken) {
    throw refuse(
      "not_configured",
      "GitHub OIDC sign-in is off here: the service needs ASSURE_BASE_URL or ASSURE_OIDC_AUDIENCE. Use an API key.",
    );
  }
  let claims;
  try {
    claims = await verifyOidcToken(token);
  } catch (error) {
    if (error instanceof OidcRefusedError) throw refuse(error.reason, error.message);
    throw error;
  }
  const project = await store.getProjectByRepository(Number(claims.repository_id));
  if (!project) {
    throw refuse(
      "repository_not_bound",
      `No project lists the repository ${claims.repository} (id ${claims.repository_id}): bind it with PATCH /v1/projects/{id}.`,
    );
  }
  const unmet = unmetRestriction(project.oidc, claims);
  if (unmet) {
    throw refuse("not_allowed", `Project ${project.project_id} does not let this workflow run sign in: ${unmet}.`);
  }
  const expiresAt = new Date(clock.now().getTime() + WORKFLOW_KEY_MS).toISOString();
  const projectExists = (await store.getProject(project.project_id)) !== undefined;
  const { row, token: apiKey } = newApiKey(
    { clock, newId },
    {
      projectId: project.project_id,
      scopes: WORKFLOW_SCOPES,
      name: `GitHub Actions: ${claims.repository}${claims.workflow_ref ? ` ${claims.workflow_ref}` : ""}${claims.run_id ? ` run ${claims.run_id}` : ""}`,
      expiresAt,
      issuedFor: {
        repository: claims.repository,
        repository_id: claims.repository_id,
        workflow_ref: claims.workflow_ref ?? null,
        run_id: claims.run_id ?? null,
        run_attempt: claims.run_attempt ?? null,
        actor: claims.actor ?? null,
        sha: claims.sha ?? null,
        event_name: claims.event_name ?? null,
      },
    },
    projectExists,
  );
  // A token is exchanged once: whoever sees it later (a log, a step of the same job) gets nothing for it.
  const [redeemed] = await store.write([
    "redeemOidcToken",
    { jti: claims.jti, expires_at: new Date(claims.exp * 1000).toISOString() },
    row,
    clock.now().toISOString(),
  ]);
  if (!redeemed) {
    throw refuse(
      "token_reused",
      "This token was exchanged before: each GitHub OIDC token signs in once. Request a new one.",
    );
  }
  return {
    token: apiKey,
    key_id: row.key_id,
    project_id: project.project_id,
    scopes: [...WORKFLOW_SCOPES],
    expires_at: expiresAt,
  };
}
