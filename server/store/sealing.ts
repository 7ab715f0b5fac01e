import { EncryptionKeyError, loadEncryptionKey } from "../secrets/encryption-key.js";
import { makeSealer, sealedKeyId, type Sealer } from "../secrets/sealer.js";
import type { Db } from "./db.js";

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
  const sealer = makeSealer(loadEncryptionKey({ dbPath, configured: configuredKey, sealedWith: check && sealedKeyId(check) }));
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
  const hasSettings = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'settings'").get();
  return hasSettings ? (db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(key) as string | undefined) : undefined;
}
