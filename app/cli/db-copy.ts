import { parseArgs } from "node:util";
import { systemClock } from "../../server/clock.js";
import { ConfigError, coerceError } from "../../server/errors.js";
import { parseEncryptionKey } from "../../server/secrets/sealer.js";
import { CopyRefusedError, copySqliteToPostgres, type CopyReport } from "../../server/store/copy-to-postgres.js";
import { DB_HELP } from "./operator-help.js";

class UsageError extends Error {}

function keyNote(report: CopyReport): string {
  const start = `Start the service with ASSURE_DATABASE_URL set to the new database and ASSURE_ENCRYPTION_KEY set to the key with id ${report.keyId}`;
  return report.keySource === "ASSURE_ENCRYPTION_KEY"
    ? `${start}: the ASSURE_ENCRYPTION_KEY this copy was given.`
    : `${start}: the contents of ${report.keySource.keyFile} (keep that file; its key opens the copied secrets).`;
}

async function copy(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { from: { type: "string" }, to: { type: "string" } },
  });
  if (positionals[0] !== "copy" || positionals.length > 1) throw new UsageError("Unknown command.");
  const from = values.from ?? process.env.ASSURE_DB ?? "./data/assure.db";
  const to = values.to;
  if (!to || !/^postgres(ql)?:\/\//.test(to)) {
    throw new UsageError(
      "--to takes the PostgreSQL database to copy into: postgres://user:password@host:port/database",
    );
  }
  const configured = process.env.ASSURE_ENCRYPTION_KEY || undefined;
  const encryptionKey = configured === undefined ? undefined : parseEncryptionKey(configured);
  if (configured !== undefined && !encryptionKey) {
    throw new UsageError("ASSURE_ENCRYPTION_KEY must be 32 bytes in base64 or hex.");
  }
  const started = performance.now();
  const report = await copySqliteToPostgres({ sqlitePath: from, postgresUrl: to, encryptionKey, clock: systemClock });
  return {
    copied: { from, rows: report.rows },
    tables: report.tables,
    checksums_verified: true,
    key_id: report.keyId,
    elapsed_ms: Math.round(performance.now() - started),
    note: keyNote(report),
  };
}

/**
 * `assure db copy`: JSON on stdout; bad usage or a source or target it refuses exits 2 with the
 * reason on stderr (nothing changed), a copy that failed exits 1 (rolled back: the target stays empty).
 */
export async function runDbCommand(argv: string[]): Promise<number> {
  try {
    console.log(JSON.stringify(await copy(argv), null, 2));
    return 0;
  } catch (raw) {
    const error = coerceError(raw);
    const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    if (isUsage || error instanceof CopyRefusedError || error instanceof ConfigError) {
      console.error(error.message);
      if (isUsage) console.error(DB_HELP);
      return 2;
    }
    console.error(error);
    return 1;
  }
}
