import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { EXAMPLE_SPEC_YAML } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";
import Database from "better-sqlite3";
import { startTestService } from "../../helpers/service.js";

describe("the database locked by another process", () => {
  it("answers 503 STORAGE_UNAVAILABLE once the lock outlasts the busy timeout (5 s), writes nothing, and writes again once it is released", async () => {
    const t = await startTestService();
    const other = new Database(t.dbPath);
    try {
      other.exec("BEGIN IMMEDIATE"); // another process holds the write lock
      const refused = await t.admin.post("/v1/projects", { name: "while-locked" });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ code: "STORAGE_UNAVAILABLE", retryable: true });
      other.exec("ROLLBACK");
      expect((await t.admin.post("/v1/projects", { name: "while-locked" })).status).toBe(201);
      expect((await t.admin.get("/v1/projects")).body.data).toHaveLength(1);
    } finally {
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
      await t.close();
    }
  });
});

describe("the disk full", () => {
  let dir: string;
  let service: ChildService | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "assure-disk-full-"));
  });
  afterAll(async () => {
    await service?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 503 STORAGE_UNAVAILABLE, writes nothing half-way, and recovers by itself when space returns", async () => {
    const env = { ASSURE_DB: join(dir, "assure.db"), ASSURE_WORKERS: "0" };
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token as string;
    const largest = Math.max(...readdirSync(dir).map((name) => statSync(join(dir, name)).size));
    // Room for a few specs of ~1 MiB each (their text and canonical document), then no more.
    service = await spawnService(env, { fileSizeLimitKiB: Math.ceil(largest / 1024) + 3 * 1024 });
    const client = makeApiClient(service.baseUrl, undefined, token);
    const project = (await client.post("/v1/projects", { name: "full" })).body.project_id as string;
    const bigSpec = (i: number) =>
      `${EXAMPLE_SPEC_YAML.replace(/^name: .*$/m, `name: spec-${i}`)}\n# ${`padding ${i} `.repeat(80_000)}\n`;

    const accepted: string[] = [];
    let refused: { status: number; headers: Headers; body: any } | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const response = await client.call("POST", `/v1/test-specs?project_id=${project}`, {
        body: bigSpec(i),
        contentType: "application/yaml",
      });
      if (response.status === 201) accepted.push(response.body.test_spec_id);
      else refused = response;
    }
    expect(refused?.status).toBe(503);
    expect(refused!.body.error).toMatchObject({ code: "STORAGE_UNAVAILABLE", retryable: true });
    expect(refused!.headers.get("retry-after")).toBe("5");
    expect(accepted.length).toBeGreaterThan(0);

    // Every acknowledged spec is there, and nothing of the refused one; reads go on.
    const listed = (await client.get(`/v1/test-specs?project_id=${project}&limit=200`)).body.data as {
      test_spec_id: string;
    }[];
    expect(listed.map((s) => s.test_spec_id).sort()).toEqual([...accepted].sort());
    expect((await client.get("/healthz")).status).toBe(200);

    // Space returns: the same process takes writes again, with no restart.
    expect(spawnSync("prlimit", ["--pid", String(service.process.pid), "--fsize=unlimited"]).status).toBe(0);
    const again = await waitFor(async () => {
      const response = await client.call("POST", `/v1/test-specs?project_id=${project}`, {
        body: bigSpec(1000),
        contentType: "application/yaml",
      });
      return response.status === 201 ? response : undefined;
    }, "a write to succeed once space returned");
    expect(again.body.name).toBe("spec-1000");
    expect(service.logs.join("\n")).not.toMatch(/"level":(60)/); // nothing fatal: the writer lived on
  });
});
