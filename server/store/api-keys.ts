import type { Db } from "./db.js";

export interface ApiKeyRow {
  key_id: string;
  secret_hash: Buffer;
  project_id: string | null;
  /** JSON array of scope names. */
  scopes: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface ApiKeyInfo {
  key_id: string;
  project_id: string | null;
  scopes: string[];
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

const toInfo = ({ secret_hash: _hash, ...row }: ApiKeyRow): ApiKeyInfo => ({
  ...row,
  scopes: JSON.parse(row.scopes) as string[],
});

export function makeApiKeysStore(db: Db) {
  const insert = db.prepare(`INSERT INTO api_keys (key_id, secret_hash, project_id, scopes, name, created_at, revoked_at)
    VALUES (@key_id, @secret_hash, @project_id, @scopes, @name, @created_at, NULL)`);
  const byId = db.prepare("SELECT * FROM api_keys WHERE key_id = ?");
  const all = db.prepare("SELECT * FROM api_keys ORDER BY created_at DESC, key_id DESC");
  const revoke = db.prepare("UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL");

  return {
    reads: {
      /** The row with its secret hash, for authentication only. */
      getApiKeyRow(keyId: string): ApiKeyRow | undefined {
        return byId.get(keyId) as ApiKeyRow | undefined;
      },
      listApiKeys(): ApiKeyInfo[] {
        return (all.all() as ApiKeyRow[]).map(toInfo);
      },
    },
    writes: {
      createApiKey(row: Omit<ApiKeyRow, "revoked_at">): ApiKeyInfo {
        insert.run(row);
        return toInfo({ ...row, revoked_at: null });
      },
      revokeApiKey(keyId: string, now: string): boolean {
        return revoke.run(now, keyId).changes === 1;
      },
    },
  };
}
