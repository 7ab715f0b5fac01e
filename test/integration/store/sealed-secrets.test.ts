import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { startAgentEndpoint, type AgentEndpoint } from "../../helpers/agent-endpoint.js";
import { runCli, spawnService } from "../../helpers/child-service.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { EXAMPLE_SPEC_YAML, PROJECT_SCOPES } from "../../helpers/seed.js";
import { databaseBytes } from "../../helpers/database-files.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { openDb } from "../../../server/store/db.js";
import { migrate } from "../../../server/store/migrate.js";
import { MIGRATIONS } from "../../../server/store/migrations/index.js";
import { makeSealer } from "../../../server/secrets/sealer.js";

const findsIn = (dbPath: string, secret: string) => databaseBytes(dbPath).includes(Buffer.from(secret, "utf8"));

describe("secrets sealed at rest", () => {
  let dir: string;
  let agent: AgentEndpoint;
  let t: TestService | undefined;

  beforeAll(async () => {
    agent = await startAgentEndpoint();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const freshDir = () => (dir = mkdtempSync(join(tmpdir(), "assure-sealed-")));

  /** An environment with a header credential, and a run on it: the readiness check sends the header. */
  async function environmentWithSecret(service: TestService, secret: string) {
    const project = (await service.admin.post("/v1/projects", { name: `p-${randomBytes(3).toString("hex")}` })).body
      .project_id;
    const client = service.admin.withToken(await service.issueKey(project, PROJECT_SCOPES));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "1" })).body.agent_id;
    const environment = await client.post("/v1/environments", {
      name: "staging",
      agent_id: agentId,
      endpoint: {
        protocol: "openai-chat",
        base_url: agent.baseUrl,
        headers: { "x-api-key": secret, authorization: `Bearer ${secret}` },
      },
    });
    expect(environment.status).toBe(201);
    return { client, environmentId: environment.body.environment_id as string };
  }

  it("keeps header values sealed: neither the database file nor its WAL holds one, and the agent still gets them", async () => {
    const dbPath = join(freshDir(), "assure.db");
    t = await startTestService({ dbPath });
    const secret = `sk-live-${randomBytes(12).toString("hex")}`;
    const { client, environmentId } = await environmentWithSecret(t, secret);
    const spec = await client.call("POST", "/v1/test-specs", {
      body: EXAMPLE_SPEC_YAML,
      contentType: "application/yaml",
    });
    const run = await client.post(
      "/v1/runs",
      { test_spec_id: spec.body.test_spec_id, environment_id: environmentId },
      { headers: { "idempotency-key": "sealed-1" } },
    );
    expect(run.status).toBe(201);
    expect(agent.requests.at(-1)!.headers).toMatchObject({ "x-api-key": secret, authorization: `Bearer ${secret}` });
    expect((await client.get(`/v1/environments/${environmentId}`)).body.endpoint.header_names).toEqual([
      "x-api-key",
      "authorization",
    ]);

    expect(existsSync(`${dbPath}-wal`)).toBe(true);
    expect(findsIn(dbPath, secret)).toBe(false);
    await t.close();
    t = undefined;
    expect(findsIn(dbPath, secret)).toBe(false);
    // The key it was sealed with lives beside the database, readable by its owner only.
    expect(statSync(`${dbPath}.key`).mode & 0o777).toBe(0o600);
  });

  it("seals what an earlier version stored plain, and leaves no plain copy in the file or the WAL", async () => {
    const dbPath = join(freshDir(), "assure.db");
    const secret = `sk-old-${randomBytes(12).toString("hex")}`;
    const cursorSecret = randomBytes(32).toString("base64");
    const before = openDb(dbPath);
    migrate(
      before,
      new FakeClock(),
      { sealer: makeSealer(randomBytes(32)) },
      MIGRATIONS.filter((m) => m.version <= 9),
    );
    before.exec(`INSERT INTO projects (project_id, name, description, created_at) VALUES ('prj_old', 'old', NULL, '2026-01-01T00:00:00.000Z');
      INSERT INTO agents (agent_id, project_id, name, version, description, created_at) VALUES ('agt_old', 'prj_old', 'a', '1', NULL, '2026-01-01T00:00:00.000Z');`);
    before.prepare("INSERT INTO settings (key, value) VALUES ('cursor_secret', ?)").run(cursorSecret);
    before
      .prepare(
        `INSERT INTO environments (environment_id, project_id, name, agent_id, protocol, base_url, model, readiness_path, headers, created_at)
        VALUES ('env_old', 'prj_old', 'staging', 'agt_old', 'openai-chat', ?, NULL, '/models', ?, '2026-01-01T00:00:00.000Z')`,
      )
      .run(agent.baseUrl, JSON.stringify({ authorization: `Bearer ${secret}` }));
    before.close();
    expect(findsIn(dbPath, secret)).toBe(true);

    t = await startTestService({ dbPath });
    expect(findsIn(dbPath, secret)).toBe(false);
    expect(findsIn(dbPath, cursorSecret)).toBe(false);
    const client = t.admin.withToken(await t.issueKey("prj_old", PROJECT_SCOPES));
    expect((await client.get("/v1/environments/env_old")).body.endpoint.header_names).toEqual(["authorization"]);
    const spec = await client.call("POST", "/v1/test-specs", {
      body: EXAMPLE_SPEC_YAML,
      contentType: "application/yaml",
    });
    expect(
      (
        await client.post(
          "/v1/runs",
          { test_spec_id: spec.body.test_spec_id, environment_id: "env_old" },
          { headers: { "idempotency-key": "old-1" } },
        )
      ).status,
    ).toBe(201);
    expect(agent.requests.at(-1)!.headers.authorization).toBe(`Bearer ${secret}`);
  });

  it("will not start without the database's key, with another key, or with a key file others can read, and says why", async () => {
    const dbPath = join(freshDir(), "assure.db");
    t = await startTestService({ dbPath });
    const secret = `sk-keep-${randomBytes(8).toString("hex")}`;
    await environmentWithSecret(t, secret);
    await t.close();
    t = undefined;
    const keyFile = `${dbPath}.key`;
    const key = readFileSync(keyFile);

    // Another key, given in the environment: the real service process exits 1 saying so.
    const other = randomBytes(32).toString("base64");
    await expect(spawnService({ ASSURE_DB: dbPath, ASSURE_ENCRYPTION_KEY: other })).rejects.toThrow(
      /not the one this database's secrets are sealed with/,
    );
    expect(await runCli(["keys", "list"], { ASSURE_DB: dbPath, ASSURE_ENCRYPTION_KEY: other })).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/not the one this database's secrets are sealed with/),
    });
    await expect(startTestService({ dbPath, env: { ASSURE_ENCRYPTION_KEY: "not-a-key" } })).rejects.toThrow(
      /ASSURE_ENCRYPTION_KEY: must be 32 bytes/,
    );

    // The key file lost: no new key is made in its place.
    rmSync(keyFile);
    await expect(startTestService({ dbPath })).rejects.toThrow(
      /sealed with key [0-9a-f]{8}, and neither ASSURE_ENCRYPTION_KEY nor .*assure\.db\.key holds a key/,
    );
    expect(existsSync(keyFile)).toBe(false);

    // Restored, but readable by everyone: refused until it is the owner's only.
    writeFileSync(keyFile, key, { mode: 0o644 });
    chmodSync(keyFile, 0o644);
    await expect(startTestService({ dbPath })).rejects.toThrow(
      /can be read by other users \(mode 644\): run chmod 600/,
    );
    chmodSync(keyFile, 0o600);

    // The same key, as a variable instead of the file, opens it too; nothing was changed on the way.
    rmSync(keyFile);
    t = await startTestService({ dbPath, env: { ASSURE_ENCRYPTION_KEY: key.toString("utf8").trim() } });
    const environments = (await t.admin.get("/v1/environments")).body.data;
    expect(environments).toHaveLength(1);
    expect(existsSync(keyFile)).toBe(false);
  });
});
