import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "@jest/globals";
import { systemClock } from "../../../server/clock.js";
import { makeSealer } from "../../../server/secrets/sealer.js";
import {
  CopyVerificationError,
  copySqliteToPostgres,
  type CopyReport,
} from "../../../server/store/copy-to-postgres.js";
import { openDb, type Db } from "../../../server/store/db.js";
import { migrate } from "../../../server/store/migrate.js";
import { openPostgresStore } from "../../../server/store/open-postgres-store.js";
import { createScratchDatabase, withClient, type ScratchDatabase } from "../../helpers/postgres.js";

const AT = "2026-11-01T10:00:00.000Z";
const WAIVERS = 1_500;
const AUDIT_EVENTS = 2_500;
/** Beyond 2^53: a JavaScript number would round it. */
const LARGE_GITHUB_ID = 2n ** 62n + 1n;
const DURATION_MS = 12.345678901234567;

/** A migrated SQLite database with more rows than one INSERT takes, and the values that are easy to get wrong. */
function seed(db: Db): void {
  db.prepare("INSERT INTO projects (project_id, name, created_at) VALUES ('prj_1', 'refunds', ?)").run(AT);
  db.prepare(
    "INSERT INTO project_repositories (github_id, project_id, full_name, bound_at) VALUES (?, 'prj_1', 'acme/refunds', ?)",
  ).run(LARGE_GITHUB_ID, AT);
  db.prepare(
    `INSERT INTO release_decisions (decision_id, project_id, attempt, status, reasons, created_at, updated_at)
     VALUES ('dec_1', 'prj_1', 1, 'ALLOWED', '[]', ?, ?)`,
  ).run(AT, AT);
  // Waivers revoking waivers that sort after them (in another INSERT's rows), and a chain of three.
  const waiver = db.prepare(
    `INSERT INTO waivers (waiver_id, decision_id, gate_id, reason, revokes, created_at)
     VALUES (?, 'dec_1', 'DET', 'known flake', ?, ?)`,
  );
  const id = (i: number) => `wvr_${String(i).padStart(5, "0")}`;
  db.transaction(() => {
    for (let i = WAIVERS - 1; i >= 0; i--) waiver.run(id(i), i < WAIVERS / 2 ? id(WAIVERS - 1 - i) : null, AT);
    waiver.run("wvr_chain_c", null, AT);
    waiver.run("wvr_chain_b", "wvr_chain_c", AT);
    waiver.run("wvr_chain_a", "wvr_chain_b", AT);
  })();
  const audit = db.prepare(
    "INSERT INTO audit_events (audit_event_id, created_at, actor_type, action, project_id) VALUES (?, ?, 'cli', 'keys.create', 'prj_1')",
  );
  db.transaction(() => {
    for (let i = 0; i < AUDIT_EVENTS; i++) audit.run(`aud_${String(i).padStart(6, "0")}`, AT);
  })();
  db.prepare(
    "INSERT INTO webhooks (webhook_id, project_id, url, secret, created_at, updated_at) VALUES ('whk_1', 'prj_1', 'http://127.0.0.1:9/hook', 'not-sealed', ?, ?)",
  ).run(AT, AT);
  db.prepare(
    "INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_source, event_type, status, created_at) VALUES ('dlv_1', 'whk_1', 'evt_1', 'run', 'run.completed', 'delivered', ?)",
  ).run(AT);
  db.prepare(
    "INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, attempted_at, response_status, duration_ms) VALUES ('dlv_1', 1, 'whk_1', ?, 204, ?)",
  ).run(AT, DURATION_MS);
  const job = db.prepare(
    "INSERT INTO jobs (job_id, task, job_key, payload, state, run_at, max_attempts, created_at) VALUES (?, 'run', ?, '{}', 'queued', ?, 3, ?)",
  );
  job.run(7, "job-7", AT, AT);
  job.run(42, "job-42", AT, AT);
  // AUTOINCREMENT handed out ids up to 9000 (the rows since deleted): PostgreSQL must not hand them out again.
  db.prepare("UPDATE sqlite_sequence SET seq = 9000 WHERE name = 'jobs'").run();
}

describe("copySqliteToPostgres", () => {
  const dirs: string[] = [];
  let database: ScratchDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const key = randomBytes(32);
  const seededSource = () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-copy-"));
    dirs.push(dir);
    const path = join(dir, "assure.db");
    const db = openDb(path);
    migrate(db, systemClock, { sealer: makeSealer(key) });
    seed(db);
    db.close();
    return path;
  };
  const rowsOf = (report: CopyReport, table: string) => report.tables.find((entry) => entry.table === table)?.rows;

  it("copies rows in batches, a table referencing itself in generations, exact integers and reals, and moves the job ids on", async () => {
    const sqlitePath = seededSource();
    database = await createScratchDatabase();
    const report = await copySqliteToPostgres({
      sqlitePath,
      postgresUrl: database.url,
      encryptionKey: key,
      clock: systemClock,
    });
    expect(rowsOf(report, "waivers")).toBe(WAIVERS + 3);
    expect(rowsOf(report, "audit_events")).toBe(AUDIT_EVENTS);
    expect(report.keySource).toBe("ASSURE_ENCRYPTION_KEY");
    expect(report.keyId).toBe(makeSealer(key).keyId);

    await withClient(database, async (client) => {
      const repository = await client.query("SELECT github_id::text AS id FROM project_repositories");
      expect(repository.rows).toEqual([{ id: LARGE_GITHUB_ID.toString() }]);
      const attempt = await client.query("SELECT duration_ms FROM webhook_attempts");
      expect(attempt.rows).toEqual([{ duration_ms: DURATION_MS }]);
      const revoked = await client.query("SELECT revokes FROM waivers WHERE waiver_id = 'wvr_chain_a'");
      expect(revoked.rows).toEqual([{ revokes: "wvr_chain_b" }]);
      const next = await client.query("SELECT nextval(pg_get_serial_sequence('jobs', 'job_id'))::int AS id");
      expect(next.rows).toEqual([{ id: 9001 }]);
    });
    // The service opens it with the same key.
    const store = await openPostgresStore(database.url, { clock: systemClock, encryptionKey: key, maxConnections: 2 });
    try {
      expect((await store.listProjects({}, { limit: 10, after: undefined })).rows.map((p) => p.name)).toEqual([
        "refunds",
      ]);
    } finally {
      await store.close();
    }
  });

  it("rolls everything back, naming the table, when a table reads back different from what was written", async () => {
    const sqlitePath = seededSource();
    database = await createScratchDatabase();
    // A lossy setting on the target: its reals come back rounded to a few digits.
    await withClient(database, (client) =>
      client.query(`ALTER DATABASE ${database!.name} SET extra_float_digits = -12`),
    );
    const copying = copySqliteToPostgres({
      sqlitePath,
      postgresUrl: database.url,
      encryptionKey: key,
      clock: systemClock,
    });
    await expect(copying).rejects.toThrow(CopyVerificationError);
    await expect(copying).rejects.toThrow(
      /^Table webhook_attempts differs after the copy: 1 row\(s\) in SQLite, 1 in PostgreSQL, with different values/,
    );
    await withClient(database, async (client) => {
      const tables = await client.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
      );
      expect(tables.rows).toEqual([]);
    });
  });
});
