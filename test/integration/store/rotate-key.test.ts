import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { startAgentEndpoint, type AgentEndpoint } from "../../helpers/agent-endpoint.js";
import { runCli } from "../../helpers/child-service.js";
import { databaseBytes } from "../../helpers/database-files.js";
import { EXAMPLE_SPEC_YAML, PROJECT_SCOPES } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { systemClock } from "../../../server/clock.js";
import { keyFileOf, stageKey, stagedKeyFileOf } from "../../../server/secrets/encryption-key.js";
import { makeSealer } from "../../../server/secrets/sealer.js";
import { openStore } from "../../../server/store/index.js";

const findsIn = (dbPath: string, secret: string) => databaseBytes(dbPath).includes(Buffer.from(secret, "utf8"));

describe("npx assure secrets rotate-key", () => {
  let agent: AgentEndpoint;
  let t: TestService | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    agent = await startAgentEndpoint();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  afterAll(async () => {
    await agent.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const freshDbPath = () => {
    const dir = mkdtempSync(join(tmpdir(), "assure-rotate-"));
    dirs.push(dir);
    return join(dir, "assure.db");
  };

  /** A project whose environment carries `secret` in its headers, a spec, and a webhook (a sealed secret too). */
  async function seedSecrets(service: TestService, secret: string) {
    const project = (await service.admin.post("/v1/projects", { name: `p-${randomBytes(3).toString("hex")}` })).body
      .project_id as string;
    const client = service.admin.withToken(await service.issueKey(project, [...PROJECT_SCOPES, "webhooks:write"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "1" })).body.agent_id;
    const environment = await client.post("/v1/environments", {
      name: "staging",
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, headers: { authorization: `Bearer ${secret}` } },
    });
    const spec = await client.call("POST", "/v1/test-specs", {
      body: EXAMPLE_SPEC_YAML,
      contentType: "application/yaml",
    });
    expect((await client.post("/v1/webhooks", { url: "http://127.0.0.1:9/hook" })).status).toBe(201);
    return {
      client,
      environmentId: environment.body.environment_id as string,
      testSpecId: spec.body.test_spec_id as string,
    };
  }

  it("seals every secret again under a new key file, atomically: the old key opens nothing, the service starts on the new one", async () => {
    const dbPath = freshDbPath();
    t = await startTestService({ dbPath });
    const secret = `sk-live-${randomBytes(12).toString("hex")}`;
    await seedSecrets(t, secret);
    await t.close();
    t = undefined;
    const oldKey = readFileSync(keyFileOf(dbPath), "utf8");

    const rotated = await runCli(["secrets", "rotate-key"], { ASSURE_DB: dbPath });
    expect(rotated.stderr).toBe("");
    expect(rotated.status).toBe(0);
    const answer = rotated.json() as { rotated: { from_key_id: string; to_key_id: string }; resealed: number };
    expect(answer.rotated.to_key_id).not.toBe(answer.rotated.from_key_id);
    // The environment's headers, the webhook's secret, the seal check, the cursor and page-link secrets.
    expect(answer.resealed).toBeGreaterThanOrEqual(5);
    expect(readFileSync(keyFileOf(dbPath), "utf8")).not.toBe(oldKey);
    expect(existsSync(stagedKeyFileOf(dbPath))).toBe(false);
    expect(findsIn(dbPath, secret)).toBe(false);

    // The old key no longer opens the database.
    await expect(
      openStore(dbPath, { clock: systemClock, encryptionKey: Buffer.from(oldKey.trim(), "base64") }),
    ).rejects.toThrow(/not the one/);

    // The service starts on the new key, and the agent still gets its credential.
    t = await startTestService({ dbPath });
    const project = await seedSecrets(t, `${secret}-2`);
    const run = await project.client.post(
      "/v1/runs",
      { test_spec_id: project.testSpecId, environment_id: project.environmentId },
      { headers: { "idempotency-key": "after-rotation" } },
    );
    expect(run.status).toBe(201);
    const store = await openStore(dbPath, { clock: systemClock });
    try {
      const environments = await store.sql
        .prepare("SELECT environment_id FROM environments ORDER BY created_at")
        .pluck()
        .all<string>();
      expect((await store.getEnvironmentTarget(environments[0]!))!.headers).toEqual({
        authorization: `Bearer ${secret}`,
      });
    } finally {
      await store.close();
    }
    const trail = await t.admin.get("/v1/audit-events?actor=cli&action=secrets.rotate-key");
    expect(trail.body.data).toEqual([
      expect.objectContaining({
        resource_id: answer.rotated.to_key_id,
        actor: expect.objectContaining({ type: "cli" }),
      }),
    ]);
  });

  it("with ASSURE_ENCRYPTION_KEY, seals under ASSURE_NEW_ENCRYPTION_KEY, and refuses without it", async () => {
    const dbPath = freshDbPath();
    const oldKey = randomBytes(32).toString("base64");
    const newKey = randomBytes(32).toString("base64");
    t = await startTestService({ dbPath, env: { ASSURE_ENCRYPTION_KEY: oldKey } });
    const secret = `sk-env-${randomBytes(12).toString("hex")}`;
    await seedSecrets(t, secret);
    await t.close();
    t = undefined;

    const refused = await runCli(["secrets", "rotate-key"], { ASSURE_DB: dbPath, ASSURE_ENCRYPTION_KEY: oldKey });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/ASSURE_NEW_ENCRYPTION_KEY/);

    const rotated = await runCli(["secrets", "rotate-key"], {
      ASSURE_DB: dbPath,
      ASSURE_ENCRYPTION_KEY: oldKey,
      ASSURE_NEW_ENCRYPTION_KEY: newKey,
    });
    expect(rotated.status).toBe(0);
    expect(findsIn(dbPath, secret)).toBe(false);
    await expect(
      openStore(dbPath, { clock: systemClock, encryptionKey: Buffer.from(oldKey, "base64") }),
    ).rejects.toThrow(/not the one/);
    t = await startTestService({ dbPath, env: { ASSURE_ENCRYPTION_KEY: newKey } });
    expect((await t.admin.get("/v1/projects")).status).toBe(200);
  });

  it("finishes a rotation that stopped after its commit, and undoes one that stopped before", async () => {
    const dbPath = freshDbPath();
    t = await startTestService({ dbPath });
    const secret = `sk-crash-${randomBytes(12).toString("hex")}`;
    await seedSecrets(t, secret);
    await t.close();
    t = undefined;

    // Stopped before the commit: a key staged, nothing sealed with it. The next start discards it.
    stageKey(dbPath, randomBytes(32));
    await (await openStore(dbPath, { clock: systemClock })).close();
    expect(existsSync(stagedKeyFileOf(dbPath))).toBe(false);

    // Stopped after the commit: everything sealed with the staged key, not yet promoted. The next start promotes it.
    const staged = randomBytes(32);
    const store = await openStore(dbPath, { clock: systemClock });
    stageKey(dbPath, staged); // as the command does: after opening the store, before sealing
    await store.transaction(() => store.resealSecrets(makeSealer(staged)));
    await store.close();
    const reopened = await openStore(dbPath, { clock: systemClock });
    try {
      expect(reopened.encryptionKeyId).toBe(makeSealer(staged).keyId);
      expect(existsSync(stagedKeyFileOf(dbPath))).toBe(false);
      expect(readFileSync(keyFileOf(dbPath), "utf8").trim()).toBe(staged.toString("base64"));
    } finally {
      await reopened.close();
    }
  });
});
