import type { Clock } from "../clock.js";
import type { NewId } from "../ids.js";
import type { ApiKeyInfo, Store } from "../store/index.js";
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
}

/** Issues a key and returns its token, which exists only in this return value: the store keeps a hash. */
export function issueApiKey(
  { store, clock, newId }: { store: Pick<Store, "getProject" | "createApiKey">; clock: Clock; newId: NewId },
  { projectId, scopes = [], name }: IssueApiKeyRequest,
): ApiKeyInfo & { token: string } {
  let granted: string[] = [...SCOPES];
  if (projectId === null) {
    if (scopes.length > 0) throw new ApiKeyRequestError("An admin key carries every scope; do not name scopes.");
  } else {
    if (!store.getProject(projectId)) throw new ApiKeyRequestError(`Project '${projectId}' does not exist.`);
    if (scopes.length === 0) throw new ApiKeyRequestError("A project key needs at least one scope.");
    const unknown = scopes.filter((scope) => !isScope(scope));
    if (unknown.length > 0) throw new ApiKeyRequestError(`Unknown scope(s): ${unknown.join(", ")}. Known: ${SCOPES.join(", ")}`);
    const adminOnly = scopes.filter((scope) => (ADMIN_ONLY_SCOPES as readonly string[]).includes(scope));
    if (adminOnly.length > 0) throw new ApiKeyRequestError(`Only admin keys carry: ${adminOnly.join(", ")}`);
    granted = [...new Set(scopes)];
  }
  const keyId = newId("apiKey");
  const minted = mintToken(keyId);
  const info = store.createApiKey({
    key_id: keyId,
    secret_hash: minted.secretHash,
    project_id: projectId,
    scopes: JSON.stringify(granted),
    name: name ?? null,
    created_at: clock.now().toISOString(),
  });
  return { ...info, token: minted.token };
}
