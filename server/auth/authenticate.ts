import type { Clock } from "../clock.js";
import { ApiError } from "../errors.js";
import type { ServiceStore } from "../store/service-store.js";
import { parseToken, secretMatches } from "./api-keys.js";
import { SCOPES, type Scope } from "./scopes.js";

/** Who is calling: a key bound to one project, or an admin key (project_id null) with every scope. */
export interface Principal {
  key_id: string;
  /** The key's name, as the audit trail labels its actor. */
  name?: string | null;
  project_id: string | null;
  scopes: ReadonlySet<Scope>;
  /** A key that acts for one repository only (a workflow's, from its OIDC token): its GitHub id and name. */
  repository?: { github_id: number; full_name: string } | undefined;
}

const BEARER = /^Bearer ([^\s]+)$/i;
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export function makeAuthenticator(store: Pick<ServiceStore, "getApiKeyRow">, clock: Clock) {
  return async function authenticate(authorization: string | undefined): Promise<Principal> {
    const unauthenticated = (message: string) =>
      new ApiError("UNAUTHENTICATED", { message, headers: { "WWW-Authenticate": 'Bearer realm="assure"' } });
    if (!authorization) throw unauthenticated("Send an API key as 'Authorization: Bearer <token>'.");
    const bearer = BEARER.exec(authorization);
    const parsed = bearer ? parseToken(bearer[1]!) : undefined;
    if (!parsed) throw unauthenticated("The Authorization header does not hold an assure API key.");
    const row = await store.getApiKeyRow(parsed.keyId);
    if (!row || row.revoked_at !== null || !secretMatches(parsed.secret, row.secret_hash)) {
      throw unauthenticated("The API key is unknown or revoked.");
    }
    if (row.expires_at !== null && row.expires_at <= clock.now().toISOString()) {
      throw unauthenticated(`The API key expired at ${row.expires_at}; get a new one.`);
    }
    const scopes = row.project_id === null ? ALL_SCOPES : new Set(row.scopes as Scope[]);
    return {
      key_id: row.key_id,
      name: row.name,
      project_id: row.project_id,
      scopes,
      ...(row.issued_for
        ? { repository: { github_id: Number(row.issued_for.repository_id), full_name: row.issued_for.repository } }
        : {}),
    };
  };
}

export function assertScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) {
    throw new ApiError("INSUFFICIENT_SCOPE", { message: `This API key lacks the scope '${scope}'.` });
  }
}

/**
 * Which project a request acts on. A project key acts on its own project only; naming another
 * one is answered as if it did not exist. An admin key must name one.
 */
export function resolveProjectId(principal: Principal, requested: string | undefined): string {
  if (principal.project_id !== null) {
    if (requested !== undefined && requested !== principal.project_id) {
      throw new ApiError("NOT_FOUND", { message: `Project '${requested}' was not found.` });
    }
    return principal.project_id;
  }
  if (requested === undefined) {
    throw new ApiError("PROJECT_ID_REQUIRED", {
      message: "An admin key must name the project.",
      details: [{ path: "project_id", message: "required with an admin key" }],
    });
  }
  return requested;
}

/** True when the principal may see resources of that project. */
export function canSee(principal: Principal, projectId: string): boolean {
  return principal.project_id === null || principal.project_id === projectId;
}

/**
 * A key that acts for one repository (a workflow's) may name only that repository as what a
 * decision, a run or a spec is about: its token says which repository asked, not the others of its
 * project. `path` names the field for the refusal.
 */
export function assertActsFor(
  principal: Principal,
  repository: string,
  repositories: readonly { github_id: number; full_name: string }[],
  path: string,
): void {
  if (!principal.repository) return;
  const named = repositories.find((r) => r.full_name.toLowerCase() === repository.toLowerCase());
  if (named?.github_id === principal.repository.github_id) return;
  throw new ApiError("FORBIDDEN", {
    message: `This key was issued to a workflow of ${principal.repository.full_name}: it acts for that repository only, not for '${repository}'.`,
    details: [{ path, message: `must be ${principal.repository.full_name}` }],
  });
}
