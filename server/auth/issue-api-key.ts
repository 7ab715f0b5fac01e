import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { ApiKeyInfo, Store } from "../store/index.js";
import type { ApiKeyRow, KeyIssuedFor } from "../store/api-keys.js";
import { mintToken } from "./api-keys.js";
import { ADMIN_ONLY_SCOPES, SCOPES, isScope } from "./scopes.js";

export class ApiKeyRequestError extends Error {
  override name = "ApiKeyRequestError";
}

export interface IssueApiKeyRequest {
  /** null for an admin key, which carries every scope. */
  projectId: string | null;
  scopes?: readonly string[];
  name?: string | undefined;
  /** A short-lived key stops working then. */
  expiresAt?: string | undefined;
  /** Who a short-lived key was issued to. */
  issuedFor?: KeyIssuedFor | undefined;
}

/**
 * A new key's row and its token, which exists only in this return value: the store keeps a hash.
 * Refuses (ApiKeyRequestError) what a key may not be: scopes unknown or admin-only, a project that
 * does not exist (`projectExists`, read by the caller: its store may answer later).
 */
export function newApiKey(
  { clock, newId }: { clock: Clock; newId: NewId },
  { projectId, scopes = [], name, expiresAt, issuedFor }: IssueApiKeyRequest,
  projectExists: boolean,
): { row: Omit<ApiKeyRow, "revoked_at">; token: string } {
  let granted: string[] = [...SCOPES];
  if (projectId === null) {
    if (scopes.length > 0) throw new ApiKeyRequestError("An admin key carries every scope; do not name scopes.");
  } else {
    if (!projectExists) throw new ApiKeyRequestError(`Project '${projectId}' does not exist.`);
    if (scopes.length === 0) throw new ApiKeyRequestError("A project key needs at least one scope.");
    const unknown = scopes.filter((scope) => !isScope(scope));
    if (unknown.length > 0) {
      throw new ApiKeyRequestError(`Unknown scope(s): ${unknown.join(", ")}. Known: ${SCOPES.join(", ")}`);
    }
    const adminOnly = scopes.filter((scope) => (ADMIN_ONLY_SCOPES as readonly string[]).includes(scope));
    if (adminOnly.length > 0) throw new ApiKeyRequestError(`Only admin keys carry: ${adminOnly.join(", ")}`);
    granted = [...new Set(scopes)];
  }
  const keyId = newId("apiKey");
  const minted = mintToken(keyId);
  return {
    row: {
      key_id: keyId,
      secret_hash: minted.secretHash,
      project_id: projectId,
      scopes: granted,
      name: name ?? null,
      created_at: clock.now().toISOString(),
      expires_at: expiresAt ?? null,
      issued_for: issuedFor ?? null,
    },
    token: minted.token,
  };
}

/** Issues a key through a store of its own connection (the operator's CLI), and returns its token. */
export async function issueApiKey(
  deps: { store: Pick<Store, "getProject" | "createApiKey">; clock: Clock; newId: NewId },
  request: IssueApiKeyRequest,
): Promise<ApiKeyInfo & { token: string }> {
  const projectExists = request.projectId !== null && (await deps.store.getProject(request.projectId)) !== undefined;
  const { row, token } = newApiKey(deps, request, projectExists);
  return { ...(await deps.store.createApiKey(row)), token };
}
