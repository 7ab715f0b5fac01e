import { randomBytes } from "node:crypto";
import type { Sealer } from "../secrets/sealer.js";
import type { Sql } from "./sql/sql.js";
import { SEALED_AT } from "./sealing.js";

/** The setting that holds the key page links are signed with (sealed at rest, like every secret). */
export const PAGE_LINK_SECRET = "page_link_secret";

/** Returns the stored secret of that name, creating it once; it survives restarts, and is stored sealed. */
export async function getOrCreateSecret(db: Sql, sealer: Sealer, name: string): Promise<Buffer> {
  const at = SEALED_AT.setting(name);
  await db
    .prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
    .run(name, sealer.seal(randomBytes(32).toString("base64"), at));
  const sealed = await db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get<string>(name);
  return Buffer.from(sealer.open(sealed!, at), "base64");
}

/** Secrets the service keeps by name (the GitHub App's credentials, say), sealed at rest. */
export function makeSettingsStore(db: Sql, sealer: Sealer) {
  const read = db.prepare("SELECT value FROM settings WHERE key = ?").pluck();
  const write = db.prepare(
    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  return {
    reads: {
      /** The secret stored under `name`, unsealed; undefined if there is none. */
      async getSecretSetting(name: string): Promise<string | undefined> {
        const sealed = await read.get<string>(name);
        return sealed === undefined ? undefined : sealer.open(sealed, SEALED_AT.setting(name));
      },
    },
    writes: {
      /** Stores a secret under `name`, sealed, replacing what was there. */
      async putSecretSetting(name: string, value: string): Promise<void> {
        await write.run(name, sealer.seal(value, SEALED_AT.setting(name)));
      },
    },
  };
}
