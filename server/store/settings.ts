import { randomBytes } from "node:crypto";
import type { Sealer } from "../secrets/sealer.js";
import type { Db } from "./db.js";
import { SEALED_AT } from "./sealing.js";

/** Returns the stored secret of that name, creating it once; it survives restarts, and is stored sealed. */
export function getOrCreateSecret(db: Db, sealer: Sealer, name: string): Buffer {
  const at = SEALED_AT.setting(name);
  db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(
    name,
    sealer.seal(randomBytes(32).toString("base64"), at),
  );
  return Buffer.from(sealer.open(db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(name) as string, at), "base64");
}
