import { randomBytes } from "node:crypto";
import type { Sealer } from "../secrets/sealer.js";
import type { Db } from "./db.js";
import { SEALED_AT } from "./sealing.js";

/** The setting that holds the key page links are signed with (sealed at rest, like every secret). */
export const PAGE_LINK_SECRET = "page_link_secret";

/** Returns the stored secret of that name, creating it once; it survives restarts, and is stored sealed. */
export function getOrCreateSecret(db: Db, sealer: Sealer, name: string): Buffer {
  const at = SEALED_AT.setting(name);
  db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(
    name,
    sealer.seal(randomBytes(32).toString("base64"), at),
  );
  return Buffer.from(
    sealer.open(db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(name) as string, at),
    "base64",
  );
}

/** Secrets the service keeps by name (the GitHub App's credentials, say), sealed at rest. */
export function makeSettingsStore(db: Db, sealer: Sealer) {
  const read = db.prepare("SELECT value FROM settings WHERE key = ?").pluck();
  const write = db.prepare(
    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  return {
    reads: {
      /** The secret stored under `name`, unsealed; undefined if there is none. */
      getSecretSetting(name: string): string | undefined {
        const sealed = read.get(name) as string | undefined;
        return sealed === undefined ? undefined : sealer.open(sealed, SEALED_AT.setting(name));
      },
    },
    writes: {
      /** Stores a secret under `name`, sealed, replacing what was there. */
      putSecretSetting(name: string, value: string): void {
        write.run(name, sealer.seal(value, SEALED_AT.setting(name)));
      },
    },
  };
}
