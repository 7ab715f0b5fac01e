import type { Clock } from "../clock.js";
import type { Db } from "./db.js";
import { MIGRATIONS, type Migration, type MigrationContext } from "./migrations/index.js";

/**
 * Applies every pending migration, each in its own transaction, and records it. If one of them
 * overwrote values that must not linger (`scrub`), the file is rebuilt from its live rows (VACUUM)
 * and the WAL emptied afterwards.
 */
export function migrate(
  db: Db,
  clock: Clock,
  context: MigrationContext,
  migrations: readonly Migration[] = MIGRATIONS,
): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const applied = new Set(db.prepare("SELECT version FROM schema_migrations").pluck().all() as number[]);
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(
      `The database is at schema version ${newest}, newer than this build knows (${known}); upgrade assure.`,
    );
  }
  const done: number[] = [];
  let scrub = false;
  const isApplied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").pluck();
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    // Another process (the CLI, a second node) may be migrating the same file: the version is read
    // again under the write lock (IMMEDIATE), so each migration is applied by exactly one of them.
    const ran = db
      .transaction(() => {
        if (isApplied.get(migration.version)) return false;
        if (migration.sql) db.exec(migration.sql);
        migration.run?.(db, context);
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          migration.version,
          migration.name,
          clock.now().toISOString(),
        );
        return true;
      })
      .immediate();
    if (!ran) continue;
    done.push(migration.version);
    scrub ||= migration.scrub === true;
  }
  if (scrub) {
    db.exec("VACUUM");
    db.pragma("wal_checkpoint(TRUNCATE)");
  }
  return done;
}
