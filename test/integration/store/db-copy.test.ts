import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import Database from "better-sqlite3";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { systemClock } from "../../../server/clock.js";
import { keyFileOf } from "../../../server/secrets/encryption-key.js";
import { keyIdOf, makeSealer, parseEncryptionKey } from "../../../server/secrets/sealer.js";
import { openDb } from "../../../server/store/db.js";
import { migrate } from "../../../server/store/migrate.js";
import { LATEST_MIGRATION, MIGRATIONS } from "../../../server/store/migrations/index.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { runCli } from "../../helpers/child-service.js";
import { createScratchDatabase, withClient, type ScratchDatabase } from "../../helpers/postgres.js";
import { readTrace, waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

interface CopyAnswer {
  copied: { from: string; rows: number };
  tables: { table: string; rows: number; checksum: string }[];
  checksums_verified: boolean;
  key_id: string;
  elapsed_ms: number;
  note: string;
}

/** The target's tables, and the rows of any table a test put there. */
const tablesOf = (database: ScratchDatabase) =>
  withClient(database, async (client) =>
    (
      await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name",
      )
    ).rows.map((row) => row.table_name),
  );

describe("assure db copy (SQLite into an empty PostgreSQL database)", () => {
  let agent: ExampleAgent;
  let t: TestService | undefined;
  const databases: ScratchDatabase[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    agent = await startExampleAgent();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => {
    await agent.close();
    for (const database of databases) await database.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const freshDbPath = () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-db-copy-"));
    dirs.push(dir);
    return join(dir, "assure.db");
  };
  const scratch = async () => {
    const database = await createScratchDatabase();
    databases.push(database);
    return database;
  };
  /** A SQLite database at this build's schema, with its key file, and nothing in it. */
  const migratedSource = async () => {
    const dbPath = freshDbPath();
    const service = await startTestService({ dbPath });
    await service.close();
    return dbPath;
  };
  const copy = (from: string, to: string, env: Record<string, string> = {}) =>
    runCli(["db", "copy", "--from", from, "--to", to], env);

  it("copies a service's history, keys and decisions: the service on PostgreSQL answers as it did on SQLite", async () => {
    const dbPath = freshDbPath();
    t = await startTestService({ dbPath, env: { ASSURE_WORKERS: "2" } });
    const p = await seedProject(t, agent.baseUrl, { name: "refunds", specYaml: deterministicSpecYaml({ repeat: 1 }) });
    await t.admin.post("/v1/projects", { name: "second-project", description: "nothing in it yet" });
    const ciToken = await t.issueKey(p.projectId, [
      ...PROJECT_SCOPES,
      "releases:read",
      "releases:write",
      "webhooks:read",
      "webhooks:write",
    ]);
    const ci = t.admin.withToken(ciToken);
    const webhook = (await ci.post("/v1/webhooks", { url: "http://127.0.0.1:9/hook" })).body as {
      webhook_id: string;
      secret: string;
    };
    const subject = { repository: "acme/refunds", commit_sha: "a".repeat(40) };
    const decision = await ci.post("/v1/release-decisions", {
      subject,
      plan: [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }],
    });
    expect(decision.status).toBe(201);
    const created = await ci.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId, source: subject },
      { headers: { "idempotency-key": "before-the-copy" } },
    );
    expect(created.status).toBe(201);
    const runId = created.body.run_id as string;
    expect((await waitForRun(ci, runId)).status).toBe("COMPLETED");
    const decisionId = decision.body.decision_id as string;
    await waitFor(
      async () => (await ci.get(`/v1/release-decisions/${decisionId}`)).body.status !== "PENDING" || undefined,
      "the decision",
    );

    /** What the tests compare: the same requests on either service, its own address taken out. */
    const answers = async (service: TestService, project: ApiClient, ci: ApiClient) => {
      const admin = service.admin;
      const get = async (client: ApiClient, path: string) => {
        const response = await client.get(path);
        expect(response.status).toBe(200);
        // A page link is signed when it is read (its expiry moves on): the one signed on SQLite is opened below.
        const text = JSON.stringify(response.body)
          .replaceAll(service.baseUrl, "<service>")
          .replace(/\?exp=\d+&sig=[\w-]+/g, "?<signed>");
        return JSON.parse(text) as unknown;
      };
      return {
        run: await get(project, `/v1/runs/${runId}`),
        evidence: await get(project, `/v1/runs/${runId}/evidence`),
        evaluations: await get(project, `/v1/runs/${runId}/evaluations`),
        trace: await readTrace(project, runId),
        decision: await get(ci, `/v1/release-decisions/${decisionId}`),
        decisionEvents: await get(ci, `/v1/release-decisions/${decisionId}/events`),
        projects: await get(admin, "/v1/projects"),
        auditEvents: await get(admin, "/v1/audit-events?limit=200"),
        webhooks: await get(ci, "/v1/webhooks"),
      };
    };
    const onSqlite = await answers(t, p.client, ci);
    expect((onSqlite.decision as { status: string }).status).toBe("ALLOWED");
    expect((onSqlite.auditEvents as { data: unknown[] }).data.length).toBeGreaterThan(3);
    const runPage = (await p.client.get(`/v1/runs/${runId}`)).body.links.html as string;
    await t.close();
    t = undefined;

    const target = await scratch();
    const key = readFileSync(keyFileOf(dbPath), "utf8").trim();
    const copied = await copy(dbPath, target.url); // the key from the file beside the database, as a start reads it
    expect(copied.stderr).toBe("");
    expect(copied.status).toBe(0);
    const answer = copied.json() as CopyAnswer;
    expect(answer.checksums_verified).toBe(true);
    expect(answer.key_id).toBe(keyIdOf(parseEncryptionKey(key)!));
    expect(answer.note).toContain(keyFileOf(dbPath));
    expect(answer.note).toContain("ASSURE_ENCRYPTION_KEY");
    expect(copied.stdout).not.toContain(key);
    const rowsOf = (table: string) => answer.tables.find((entry) => entry.table === table)?.rows;
    expect(rowsOf("runs")).toBe(1);
    expect(rowsOf("projects")).toBe(2);
    expect(rowsOf("schema_migrations")).toBe(LATEST_MIGRATION);
    expect(rowsOf("run_events")).toBeGreaterThan(0);
    expect(answer.copied.rows).toBe(answer.tables.reduce((sum, entry) => sum + entry.rows, 0));
    // The tables in foreign-key order: every referenced table before the tables that reference it.
    const position = (table: string) => answer.tables.findIndex((entry) => entry.table === table);
    expect(position("projects")).toBeLessThan(position("agents"));
    expect(position("agents")).toBeLessThan(position("environments"));
    expect(position("runs")).toBeLessThan(position("run_events"));
    expect(position("webhooks")).toBeLessThan(position("webhook_deliveries"));
    console.log(`db copy: ${answer.copied.rows} rows in ${answer.tables.length} tables, ${answer.elapsed_ms} ms`);

    t = await startTestService({
      env: { ASSURE_DATABASE_URL: target.url, ASSURE_ENCRYPTION_KEY: key, ASSURE_WORKERS: "2" },
    });
    // Tokens issued on SQLite: the project's key and the CI key still work.
    const projectClient = t.admin.withToken(p.token);
    const onPostgres = await answers(t, projectClient, t.admin.withToken(ciToken));
    expect(onPostgres).toEqual(onSqlite);

    // The page-link secret came along: a link signed on SQLite opens the page on PostgreSQL.
    expect(runPage).toMatch(/sig=/);
    expect((await fetch(`${t.baseUrl}${runPage}`)).status).toBe(200);

    // The secrets open with the same key: the environment's header, the webhook's secret.
    await t.withStore(async (store) => {
      expect((await store.getEnvironmentTarget(p.environmentId))!.headers).toEqual({
        authorization: "Bearer agent-secret",
      });
      expect(await store.webhookSecrets(webhook.webhook_id, new Date().toISOString())).toEqual([webhook.secret]);
    });

    // The engine goes on on PostgreSQL: a new job gets an id past the copied ones, and the header reaches the agent.
    const callsBefore = agent.calls.length;
    const again = await projectClient.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId },
      { headers: { "idempotency-key": "after-the-copy" } },
    );
    expect(again.status).toBe(201);
    expect((await waitForRun(projectClient, again.body.run_id as string)).status).toBe("COMPLETED");
    const newCalls = agent.calls.slice(callsBefore);
    expect(newCalls.length).toBeGreaterThan(0);
    expect(newCalls.every((call) => call.authorization === "Bearer agent-secret")).toBe(true);
    // The idempotency key of the run made on SQLite still answers with that run.
    const replayed = await projectClient.post(
      "/v1/runs",
      { test_spec_id: p.testSpecId, environment_id: p.environmentId, source: subject },
      { headers: { "idempotency-key": "before-the-copy" } },
    );
    expect(replayed.body.run_id).toBe(runId);
  });

  it("refuses a target that is not empty, and leaves it as it was", async () => {
    const dbPath = await migratedSource();
    const target = await scratch();
    await withClient(target, (client) =>
      client.query("CREATE TABLE keep_me (note text); INSERT INTO keep_me VALUES ('mine')"),
    );
    const refused = await copy(dbPath, target.url);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/not empty/);
    expect(refused.stdout).toBe("");
    expect(await tablesOf(target)).toEqual(["keep_me"]);
    await withClient(target, async (client) =>
      expect((await client.query("SELECT note FROM keep_me")).rows).toEqual([{ note: "mine" }]),
    );
  });

  it("refuses a key that does not open the source's secrets", async () => {
    const dbPath = await migratedSource();
    const target = await scratch();
    const refused = await copy(dbPath, target.url, { ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64") });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/not the one this database's secrets are sealed with/);
    expect(await tablesOf(target)).toEqual([]);
  });

  it("refuses a source at an older schema, saying to start assure on it once", async () => {
    const dbPath = freshDbPath();
    const key = randomBytes(32);
    const db = openDb(dbPath);
    migrate(
      db,
      systemClock,
      { sealer: makeSealer(key) },
      MIGRATIONS.filter((m) => m.version < LATEST_MIGRATION),
    );
    db.close();
    const target = await scratch();
    const refused = await copy(dbPath, target.url, { ASSURE_ENCRYPTION_KEY: key.toString("base64") });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`schema version ${LATEST_MIGRATION - 1}`);
    expect(refused.stderr).toMatch(/Start this version of assure on it once/);
    expect(await tablesOf(target)).toEqual([]);
  });

  it("leaves the target empty when a row cannot be copied (exit 1), naming the table", async () => {
    const dbPath = await migratedSource();
    const source = new Database(dbPath);
    // Text PostgreSQL cannot hold: a NUL character, which SQLite stores.
    source
      .prepare("INSERT INTO projects (project_id, name, description, created_at) VALUES (?, ?, ?, ?)")
      .run("prj_nul", "with-nul", "a\u0000b", new Date().toISOString());
    source.close();
    const target = await scratch();
    const failed = await copy(dbPath, target.url);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/Copying table projects failed/);
    expect(await tablesOf(target)).toEqual([]);
  });
});
