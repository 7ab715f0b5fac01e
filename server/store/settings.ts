import { randomBytes } from "node:crypto";
import type { Db } from "./db.js";

/** Returns the stored secret of that name, creating it once; it survives restarts. */
export function getOrCreateSecret(db: Db, name: string): Buffer {
  db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(
    name,
    randomBytes(32).toString("base64"),
  );
  return Buffer.from(db.prepare("SELECT value FROM settings WHERE key = ?").pluck().get(name) as string, "base64");
}
