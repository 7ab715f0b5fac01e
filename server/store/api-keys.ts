import type { Sql } from "./sql/sql.js";

export interface ApiKeyRow {
  key_id: string;
  secret_hash: Buffer;
  project_id: string | null;
  /** The scope names. */
  scopes: string[];
  name: string | null;
  created_at: string;
  revoked_at: string | null;
  /** When it stops working; null: never. */
  expires_at: string | null;
  /** Who it was issued to (a workflow run, for a key from a GitHub OIDC token); null for an operator's key. */
  issued_for: KeyIssuedFor | null;
  /** When a request last used it (to the minute); null: never. */
  last_used_at?: string | null;
}

/** Who a short-lived key was issued to: the workflow run whose OIDC token was exchanged for it. */
export interface KeyIssuedFor {
  repository: string;
  repository_id: string;
  workflow_ref: string | null;
  run_id: string | null;
  run_attempt: string | null;
  actor: string | null;
  sha: string | null;
  event_name: string | null;
}

/** A key as it is shown: everything but its secret's hash. */
export interface ApiKeyInfo extends Omit<ApiKeyRow, "secret_hash" | "last_used_at"> {
  last_used_at: string | null;
}

/** The row as stored: the scopes and who it was issued to are JSON. */
interface DbApiKey extends Omit<ApiKeyRow, "scopes" | "issued_for"> {
  scopes: string;
  issued_for: string | null;
}

const fromDb = (row: DbApiKey): ApiKeyRow => ({
  ...row,
  scopes: JSON.parse(row.scopes) as string[],
  issued_for: row.issued_for === null ? null : (JSON.parse(row.issued_for) as KeyIssuedFor),
});

const toDb = <Row extends Pick<ApiKeyRow, "scopes" | "issued_for">>(row: Row) => ({
  ...row,
  scopes: JSON.stringify(row.scopes),
  issued_for: row.issued_for === null ? null : JSON.stringify(row.issued_for),
});

const toInfo = ({ secret_hash: _hash, ...row }: ApiKeyRow): ApiKeyInfo => ({
  ...row,
  last_used_at: row.last_used_at ?? null,
});

export function makeApiKeysStore(db: Sql) {
  const insert =
    db.prepare(`INSERT INTO api_keys (key_id, secret_hash, project_id, scopes, name, created_at, revoked_at, expires_at, issued_for)
    VALUES (@key_id, @secret_hash, @project_id, @scopes, @name, @created_at, NULL, @expires_at, @issued_for)`);
  const byId = db.prepare("SELECT * FROM api_keys WHERE key_id = ?");
  const all = db.prepare("SELECT * FROM api_keys ORDER BY created_at DESC, key_id DESC");
  const revoke = db.prepare("UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL");
  const useToken = db.prepare(
    "INSERT INTO oidc_token_uses (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING",
  );
  const forgetSpentTokens = db.prepare(
    "DELETE FROM oidc_token_uses WHERE jti IN (SELECT jti FROM oidc_token_uses WHERE expires_at <= ? LIMIT 100)",
  );
  const touch = db.prepare(
    "UPDATE api_keys SET last_used_at = @at WHERE key_id = @key_id AND (last_used_at IS NULL OR last_used_at < @at)",
  );

  return {
    reads: {
      /** The row with its secret hash, for authentication only. */
      async getApiKeyRow(keyId: string): Promise<ApiKeyRow | undefined> {
        const row = await byId.get<DbApiKey>(keyId);
        return row && fromDb(row);
      },
      async listApiKeys(): Promise<ApiKeyInfo[]> {
        return (await all.all<DbApiKey>()).map((row) => toInfo(fromDb(row)));
      },
    },
    writes: {
      async createApiKey(
        row: Omit<ApiKeyRow, "revoked_at" | "expires_at" | "issued_for"> &
          Partial<Pick<ApiKeyRow, "expires_at" | "issued_for">>,
      ): Promise<ApiKeyInfo> {
        const full = { expires_at: null, issued_for: null, ...row };
        await insert.run(toDb(full));
        return toInfo({ ...full, revoked_at: null });
      },
      /**
       * A workflow's key for its OIDC token, once per token: undefined if the token (its `jti`) was
       * exchanged before. A token's id is kept until the token expires, then forgotten.
       */
      async redeemOidcToken(
        token: { jti: string; expires_at: string },
        row: Omit<ApiKeyRow, "revoked_at" | "last_used_at">,
        now: string,
      ): Promise<ApiKeyInfo | undefined> {
        await forgetSpentTokens.run(now);
        if ((await useToken.run(token.jti, token.expires_at)).changes === 0) return undefined;
        await insert.run(toDb(row));
        return toInfo({ ...row, revoked_at: null });
      },
      async touchApiKey(keyId: string, at: string): Promise<void> {
        await touch.run({ key_id: keyId, at });
      },
      async revokeApiKey(keyId: string, now: string): Promise<boolean> {
        return (await revoke.run(now, keyId)).changes === 1;
      },
    },
  };
}
