import {
  EncryptionKeyError,
  discardStagedKey,
  loadEncryptionKey,
  promoteStagedKey,
  readStagedKey,
} from "../secrets/encryption-key.js";
import { makeSealer, sealedKeyId, type Sealer } from "../secrets/sealer.js";
import type { Db } from "./db.js";
import type { Sql } from "./sql/sql.js";

/**
 * Where each sealed value lives, as the associated data it is sealed with: a value moved to
 * another row or setting does not open there. Part of the stored format: changing one needs a
 * migration.
 */
export const SEALED_AT = {
  environmentHeaders: (environmentId: string) => `environments.headers/${environmentId}`,
  setting: (key: string) => `settings/${key}`,
  webhookSecret: (webhookId: string) => `webhooks.secret/${webhookId}`,
};

/** A known value sealed at start: opening it tells whether the key is the database's. */
export const SEAL_CHECK = "seal_check";

/**
 * The sealer of this database's secrets, its key checked against the database: a key that does not
 * open the database's seal check stops the start, naming both keys' ids.
 */
export function openSealer(db: Db, dbPath: string, configuredKey: Buffer | undefined): Sealer {
  const check = readSetting(db, SEAL_CHECK);
  const sealer = makeSealer(
    loadEncryptionKey({ dbPath, configured: configuredKey, sealedWith: check && sealedKeyId(check) }),
  );
  const opens = (candidate: Sealer) => {
    try {
      candidate.open(check!, SEALED_AT.setting(SEAL_CHECK));
      return true;
    } catch {
      return false;
    }
  };
  // A rotation of the key file that stopped half-way: the staged key is the database's if the commit happened.
  const staged = configuredKey ? undefined : readStagedKey(dbPath);
  if (staged && check !== undefined) {
    if (opens(sealer)) discardStagedKey(dbPath);
    else if (opens(makeSealer(staged))) {
      promoteStagedKey(dbPath);
      return makeSealer(staged);
    }
  }
  if (check !== undefined) {
    try {
      sealer.open(check, SEALED_AT.setting(SEAL_CHECK));
    } catch {
      throw new EncryptionKeyError(
        `The encryption key (id ${sealer.keyId}) is not the one this database's secrets are sealed with (id ${sealedKeyId(check) ?? "unknown"}): ` +
          "set ASSURE_ENCRYPTION_KEY, or the key file beside the database, to that key.",
      );
    }
  }
  return sealer;
}

/** Seals the check value once, so later starts can tell a wrong key. */
export function recordSealCheck(db: Db, sealer: Sealer): void {
  db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(
    SEAL_CHECK,
    sealer.seal("assure", SEALED_AT.setting(SEAL_CHECK)),
  );
}

function readSetting(db: Db, key: string): string | undefined {
  const hasSettings = db
    .prepare(`SELECT 1 AS found FROM (${db.dialect.tableNames}) AS tables WHERE name = 'settings'`)
    .get();
  return hasSettings
    ? (db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(key) as string | undefined)
    : undefined;
}

/** Every column that holds sealed values, with the place each value is sealed for. */
const SEALED_COLUMNS = [
  { table: "environments", id: "environment_id", column: "headers", at: SEALED_AT.environmentHeaders },
  { table: "webhooks", id: "webhook_id", column: "secret", at: SEALED_AT.webhookSecret },
  { table: "webhooks", id: "webhook_id", column: "previous_secret", at: SEALED_AT.webhookSecret },
  { table: "settings", id: "key", column: "value", at: SEALED_AT.setting },
] as const;

/**
 * Opens every sealed value with `from` and seals it again with `to`, for the same place, in one
 * transaction (or the caller's): afterwards the database opens with `to` only. A settings value
 * that is not sealed (it names no key) is left as it is. Returns how many values were sealed again.
 */
export function resealAll(sql: Sql, from: Sealer, to: Sealer): Promise<number> {
  return sql.transaction(async () => {
    let count = 0;
    for (const { table, id, column, at } of SEALED_COLUMNS) {
      const rows = await sql
        .prepare(`SELECT ${id} AS id, ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL`)
        .all<{ id: string; value: string }>();
      const update = sql.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${id} = ?`);
      for (const row of rows) {
        if (sealedKeyId(row.value) === undefined) continue;
        await update.run(to.seal(from.open(row.value, at(row.id)), at(row.id)), row.id);
        count++;
      }
    }
    return count;
  });
}

/** Rebuilds the file from its live rows and empties the WAL: overwritten values (old ciphertexts, say) do not linger there. */
export function scrubFreePages(db: Db): void {
  db.exec("VACUUM");
  db.pragma("wal_checkpoint(TRUNCATE)");
}
