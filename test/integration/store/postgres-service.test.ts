import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "@jest/globals";
import { readConfig } from "../../../server/config.js";
import { systemClock } from "../../../server/clock.js";
import { openPostgresStore } from "../../../server/store/open-postgres-store.js";
import { createScratchDatabase, type ScratchDatabase } from "../../helpers/postgres.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const newKey = () => randomBytes(32).toString("base64");

describe("the service on PostgreSQL (ASSURE_DATABASE_URL)", () => {
  let database: ScratchDatabase | undefined;
  let t: TestService | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await database?.drop();
    database = undefined;
  });

  it("refuses to start without ASSURE_ENCRYPTION_KEY, saying why", () => {
    expect(() => readConfig({ ASSURE_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/assure" })).toThrow(
      /ASSURE_ENCRYPTION_KEY: required with ASSURE_DATABASE_URL/,
    );
  });

  it("keeps what it acknowledged across a restart, and opens only with the database's key", async () => {
    database = await createScratchDatabase();
    const key = newKey();
    const env = { ASSURE_DATABASE_URL: database.url, ASSURE_ENCRYPTION_KEY: key };
    t = await startTestService({ env });
    const project = await t.admin.post("/v1/projects", { name: "on-postgres" });
    expect(project.status).toBe(201);
    await t.close();

    t = await startTestService({ env });
    expect((await t.admin.get(`/v1/projects/${project.body.project_id}`)).body).toEqual(project.body);
    expect((await fetch(`${t.baseUrl}/readyz`)).status).toBe(200);
    await t.close();
    t = undefined;

    await expect(
      openPostgresStore(database.url, { clock: systemClock, encryptionKey: Buffer.from(newKey(), "base64") }),
    ).rejects.toThrow(/not the one this database's secrets are sealed with/);
  });

  it("reports not ready, naming the database, when PostgreSQL stops answering", async () => {
    database = await createScratchDatabase();
    t = await startTestService({ env: { ASSURE_DATABASE_URL: database.url, ASSURE_ENCRYPTION_KEY: newKey() } });
    expect((await fetch(`${t.baseUrl}/readyz`)).status).toBe(200);
    await database.drop(); // every connection closed, the database gone
    const readiness = await fetch(`${t.baseUrl}/readyz`);
    expect(readiness.status).toBe(503);
    expect(((await readiness.json()) as { reasons: string[] }).reasons).toEqual([
      expect.stringMatching(/^the database does not answer: /),
    ]);
    await database.drop(); // again: harmless
  });
});
