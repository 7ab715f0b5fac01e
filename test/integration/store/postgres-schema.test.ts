import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import pg from "pg";
import { FakeClock } from "../../helpers/fake-clock.js";
import {
  TEST_DATABASE_URL,
  createScratchDatabase,
  withClient,
  withScratchDatabase,
  type ScratchDatabase,
} from "../../helpers/postgres.js";
import { SCHEMA_ASPECTS, describePostgresSchema, describeSqliteSchema } from "../../helpers/schema-shape.js";
import { openDb, type Db } from "../../../server/store/db.js";
import { migrate } from "../../../server/store/migrate.js";
import { LATEST_MIGRATION, MIGRATIONS } from "../../../server/store/migrations/index.js";
import { migratePostgres } from "../../../server/store/postgres/migrate.js";
import { makeSealer } from "../../../server/secrets/sealer.js";
import { SEALED_AT, SEAL_CHECK } from "../../../server/store/sealing.js";

interface Setting {
  key: string;
  value: string;
}

const clock = new FakeClock();
const context = { sealer: makeSealer(randomBytes(32)) };

/** A SQLite database in memory, migrated as the store migrates its file. */
function migratedSqlite(): Db {
  const db = openDb(":memory:");
  migrate(db, clock, context);
  return db;
}

describe("the PostgreSQL schema", () => {
  let sqlite: Db;
  let database: ScratchDatabase;
  let postgres: pg.Client;

  beforeAll(async () => {
    sqlite = migratedSqlite();
    database = await createScratchDatabase();
    postgres = new pg.Client({ connectionString: database.url });
    await postgres.connect();
    await migratePostgres(postgres, clock, context);
  });
  afterAll(async () => {
    sqlite.close();
    await postgres.end();
    await database.drop();
  });

  it.each(SCHEMA_ASPECTS)("has SQLite's %s at the latest migration", async (aspect) => {
    const expected = describeSqliteSchema(sqlite)[aspect];
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    expect((await describePostgresSchema(postgres))[aspect]).toEqual(expected);
  });

  it("notices a column or an index missing on either side", async () => {
    const intact = describeSqliteSchema(sqlite);
    const brokenSqlite = migratedSqlite();
    try {
      brokenSqlite.exec("DROP INDEX jobs_by_fair_key; ALTER TABLE runs DROP COLUMN uploaded_by");
      const broken = describeSqliteSchema(brokenSqlite);
      expect(broken.indexes).not.toEqual(intact.indexes);
      expect(broken.columns).not.toEqual(intact.columns);
    } finally {
      brokenSqlite.close();
    }
    await withScratchDatabase((other) =>
      withClient(other, async (client) => {
        await migratePostgres(client, clock, context);
        await client.query("DROP INDEX jobs_by_fair_key; ALTER TABLE runs DROP COLUMN uploaded_by");
        const broken = await describePostgresSchema(client);
        expect(broken.indexes).not.toEqual(intact.indexes);
        expect(broken.columns).not.toEqual(intact.columns);
      }),
    );
  });

  it("starts with the settings a new SQLite file starts with: the seal check, sealed with the key", async () => {
    const fromSqlite = sqlite.prepare("SELECT key, value FROM settings ORDER BY key").all() as Setting[];
    const fromPostgres = (await postgres.query<Setting>("SELECT key, value FROM settings ORDER BY key")).rows;
    expect(fromPostgres.map(({ key }) => key)).toEqual([SEAL_CHECK]);
    expect(fromPostgres.map(({ key }) => key)).toEqual(fromSqlite.map(({ key }) => key));
    const opened = (settings: Setting[]) =>
      settings.map(({ key, value }) => context.sealer.open(value, SEALED_AT.setting(key)));
    expect(opened(fromPostgres)).toEqual(opened(fromSqlite));
  });

  it('compares text as SQLite does: bytewise (every text column is COLLATE "C")', async () => {
    const collations = await postgres.query<{ column: string }>(
      `SELECT table_name || '.' || column_name AS column FROM information_schema.columns
       WHERE table_schema = current_schema() AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'`,
    );
    expect(collations.rows).toEqual([]);

    const names = ["b", "B", "a", "_x", "Z", "é", "a b", "a-b", "aa", "~"];
    for (const [index, name] of names.entries()) {
      const row = [`proj_${index}`, name, "2026-01-15T10:00:00.000Z"];
      sqlite.prepare("INSERT INTO projects (project_id, name, created_at) VALUES (?, ?, ?)").run(...row);
      await postgres.query("INSERT INTO projects (project_id, name, created_at) VALUES ($1, $2, $3)", row);
    }
    const sqliteOrder = sqlite.prepare("SELECT name FROM projects ORDER BY name").pluck().all();
    const postgresOrder = (await postgres.query<{ name: string }>("SELECT name FROM projects ORDER BY name")).rows;
    expect(postgresOrder.map((row) => row.name)).toEqual(sqliteOrder);
    const sqliteAfter = sqlite.prepare("SELECT name FROM projects WHERE name > 'B' ORDER BY name").pluck().all();
    const postgresAfter = await postgres.query<{ name: string }>(
      "SELECT name FROM projects WHERE name > 'B' ORDER BY name",
    );
    expect(postgresAfter.rows.map((row) => row.name)).toEqual(sqliteAfter);
  });

  it("reads a project's repositories from project_records as SQLite's JSON, keys in the same order", async () => {
    const rows = [
      ["proj_repos", "with repositories"],
      ["proj_none", "without repositories"],
    ];
    const repositories = [
      [9_007_199_254_740_991, "proj_repos", "octo/agent"],
      [42, "proj_repos", 'octo/"quoted"'],
    ];
    for (const [projectId, name] of rows) {
      sqlite.prepare("INSERT INTO projects (project_id, name, created_at) VALUES (?, ?, 't')").run(projectId, name);
      await postgres.query("INSERT INTO projects (project_id, name, created_at) VALUES ($1, $2, 't')", [
        projectId,
        name,
      ]);
    }
    for (const repository of repositories) {
      sqlite
        .prepare("INSERT INTO project_repositories (github_id, project_id, full_name, bound_at) VALUES (?, ?, ?, 't')")
        .run(...repository);
      await postgres.query(
        "INSERT INTO project_repositories (github_id, project_id, full_name, bound_at) VALUES ($1, $2, $3, 't')",
        repository,
      );
    }
    for (const [projectId] of rows) {
      const fromSqlite = sqlite
        .prepare("SELECT repositories FROM project_records WHERE project_id = ?")
        .pluck()
        .get(projectId) as string;
      const fromPostgres = await postgres.query<{ repositories: string }>(
        "SELECT repositories FROM project_records WHERE project_id = $1",
        [projectId],
      );
      const reread = (json: string) => JSON.stringify(JSON.parse(json));
      expect(reread(fromPostgres.rows[0]!.repositories)).toBe(reread(fromSqlite));
    }
    expect(
      sqlite.prepare("SELECT repositories FROM project_records WHERE project_id = 'proj_repos'").pluck().get(),
    ).toBe(
      '[{"github_id":42,"full_name":"octo/\\"quoted\\""},{"github_id":9007199254740991,"full_name":"octo/agent"}]',
    );
  });

  it("refuses to change or remove an audit event, as SQLite does, and to truncate them", async () => {
    const event = ["audit_1", "2026-01-15T10:00:00.000Z", "cli", "project.create"];
    sqlite
      .prepare("INSERT INTO audit_events (audit_event_id, created_at, actor_type, action) VALUES (?, ?, ?, ?)")
      .run(...event);
    await postgres.query(
      "INSERT INTO audit_events (audit_event_id, created_at, actor_type, action) VALUES ($1, $2, $3, $4)",
      event,
    );
    const change = "UPDATE audit_events SET action = 'nothing'";
    const removal = "DELETE FROM audit_events WHERE audit_event_id = 'audit_1'";
    expect(() => sqlite.prepare(change).run()).toThrow("audit events are append-only");
    expect(() => sqlite.prepare(removal).run()).toThrow("audit events are append-only");
    await expect(postgres.query(change)).rejects.toThrow("audit events are append-only");
    await expect(postgres.query(removal)).rejects.toThrow("audit events are append-only");
    await expect(postgres.query("TRUNCATE audit_events")).rejects.toThrow("audit events are append-only");
    const left = await postgres.query("SELECT action FROM audit_events");
    expect(left.rows).toEqual([{ action: "project.create" }]);
  });

  it("refuses the values SQLite's CHECK constraints refuse", async () => {
    const job = "INSERT INTO jobs (task, job_key, payload, state, run_at, max_attempts, created_at)";
    expect(() => sqlite.prepare(`${job} VALUES ('t', 'k', '{}', 'done', 'now', 1, 'now')`).run()).toThrow(/CHECK/);
    await expect(postgres.query(`${job} VALUES ('t', 'k', '{}', 'done', 'now', 1, 'now')`)).rejects.toThrow(
      /check constraint/,
    );
    const queue = (key: string) =>
      postgres.query<{ job_id: string }>(
        `${job} VALUES ('t', '${key}', '{}', 'queued', 'now', 1, 'now') RETURNING job_id`,
      );
    const [first, second] = [(await queue("k1")).rows[0]!.job_id, (await queue("k2")).rows[0]!.job_id];
    expect(Number(second)).toBeGreaterThan(Number(first));
  });
});

describe("migratePostgres", () => {
  const everyVersion = MIGRATIONS.map((migration) => migration.version);

  it("migrates once when three nodes start together, then finds nothing to do", async () => {
    await withScratchDatabase(async (database) => {
      const nodes = [1, 2, 3].map(() => new pg.Client({ connectionString: database.url }));
      try {
        await Promise.all(nodes.map((node) => node.connect()));
        const applied = await Promise.all(nodes.map((node) => migratePostgres(node, clock, context)));
        expect(applied.filter((versions) => versions.length > 0)).toEqual([everyVersion]);
        expect(applied.filter((versions) => versions.length === 0)).toHaveLength(2);
      } finally {
        await Promise.all(nodes.map((node) => node.end()));
      }
      const pool = new pg.Pool({ connectionString: database.url });
      try {
        expect(await migratePostgres(pool, clock, context)).toEqual([]);
        const recorded = await pool.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version");
        expect(recorded.rows).toEqual(
          MIGRATIONS.map(({ version, name }) => ({
            version: String(version),
            name,
            applied_at: clock.now().toISOString(),
          })),
        );
      } finally {
        await pool.end();
      }
    });
  });

  it("needs no superuser: the database's owner migrates it, and a role that may only read finds nothing to do", async () => {
    const suffix = randomBytes(6).toString("hex");
    const [owner, reader] = [`assure_test_owner_${suffix}`, `assure_test_reader_${suffix}`];
    const asRole = (database: ScratchDatabase, role: string) => {
      const url = new URL(database.url);
      url.username = role;
      return new pg.Client({ connectionString: url.toString() });
    };
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${owner} LOGIN NOSUPERUSER; CREATE ROLE ${reader} LOGIN NOSUPERUSER`);
      await withScratchDatabase(async (database) => {
        await admin.query(`ALTER DATABASE ${database.name} OWNER TO ${owner}`);
        const ownerClient = asRole(database, owner);
        await ownerClient.connect();
        try {
          expect(await migratePostgres(ownerClient, clock, context)).toEqual(everyVersion);
          await ownerClient.query(`GRANT SELECT ON schema_migrations TO ${reader}`);
        } finally {
          await ownerClient.end();
        }
        const readerClient = asRole(database, reader);
        await readerClient.connect();
        try {
          expect(await migratePostgres(readerClient, clock, context)).toEqual([]);
        } finally {
          await readerClient.end();
        }
      });
    } finally {
      await admin.query(`DROP ROLE IF EXISTS ${owner}; DROP ROLE IF EXISTS ${reader}`);
      await admin.end();
    }
  });

  it("refuses a database at a newer version than this build knows, with SQLite's message", async () => {
    const newer = `The database is at schema version 99, newer than this build knows (${LATEST_MIGRATION}); upgrade assure.`;
    const sqlite = migratedSqlite();
    try {
      sqlite.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')").run();
      expect(() => migrate(sqlite, clock, context)).toThrow(newer);
    } finally {
      sqlite.close();
    }
    await withScratchDatabase((database) =>
      withClient(database, async (client) => {
        await migratePostgres(client, clock, context);
        await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')");
        await expect(migratePostgres(client, clock, context)).rejects.toThrow(newer);
      }),
    );
  });

  it("applies a later migration's PostgreSQL SQL, and refuses one that has none, changing nothing", async () => {
    const [laterVersion, sqliteOnlyVersion] = [LATEST_MIGRATION + 1, LATEST_MIGRATION + 2];
    const later = { version: laterVersion, name: "notes", postgres: "ALTER TABLE settings ADD COLUMN note text" };
    const sqliteOnly = {
      version: sqliteOnlyVersion,
      name: "sqlite-only",
      sql: "ALTER TABLE settings ADD COLUMN other TEXT",
    };
    await withScratchDatabase((database) =>
      withClient(database, async (client) => {
        await migratePostgres(client, clock, context);
        expect(await migratePostgres(client, clock, context, [...MIGRATIONS, later])).toEqual([laterVersion]);
        await client.query("INSERT INTO settings (key, value, note) VALUES ('k', 'v', 'noted')");
        await expect(migratePostgres(client, clock, context, [...MIGRATIONS, later, sqliteOnly])).rejects.toThrow(
          `Migration ${sqliteOnlyVersion} (sqlite-only) has no PostgreSQL SQL: it cannot be applied.`,
        );
        const newest = await client.query("SELECT max(version) AS version FROM schema_migrations");
        expect(newest.rows).toEqual([{ version: String(laterVersion) }]);
      }),
    );
    await withScratchDatabase((database) =>
      withClient(database, async (client) => {
        await expect(migratePostgres(client, clock, context, [...MIGRATIONS, sqliteOnly])).rejects.toThrow(
          `Migration ${sqliteOnlyVersion} `,
        );
        const tables = await client.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
        );
        expect(tables.rows).toEqual([]);
      }),
    );
  });
});
