import type { Migration } from "./index.js";
import { SEALED_AT, recordSealCheck } from "../sealing.js";

// Secrets sealed at rest: environments' header values and the cursor-signing secret, which were
// stored plain, are sealed with the service's key. An environment keeps its header names beside,
// in the clear: the API shows them. The migration scrubs the file and the WAL after it (VACUUM,
// checkpoint), so the plain values do not linger in free pages.
const migration: Migration = {
  version: 10,
  name: "sealed-secrets",
  sql: /* sql */ `ALTER TABLE environments ADD COLUMN header_names TEXT NOT NULL DEFAULT '[]';`,
  run(db, { sealer }) {
    const environments = db.prepare("SELECT environment_id, headers FROM environments").all() as {
      environment_id: string;
      headers: string;
    }[];
    const update = db.prepare("UPDATE environments SET headers = ?, header_names = ? WHERE environment_id = ?");
    for (const { environment_id, headers } of environments) {
      const names = Object.keys(JSON.parse(headers) as Record<string, string>);
      update.run(
        sealer.seal(headers, SEALED_AT.environmentHeaders(environment_id)),
        JSON.stringify(names),
        environment_id,
      );
    }
    const cursorSecret = db.prepare("SELECT value FROM settings WHERE key = 'cursor_secret'").pluck().get() as
      string | undefined;
    if (cursorSecret !== undefined) {
      db.prepare("UPDATE settings SET value = ? WHERE key = 'cursor_secret'").run(
        sealer.seal(cursorSecret, SEALED_AT.setting("cursor_secret")),
      );
    }
    recordSealCheck(db, sealer);
  },
  scrub: true,
};
export default migration;
