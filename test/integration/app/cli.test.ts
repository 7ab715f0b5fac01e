import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "@jest/globals";
import { runCli } from "../../helpers/child-service.js";
import { openStore } from "../../../server/store/index.js";
import { systemClock } from "../../../server/clock.js";
import { buildService } from "../../../scripts/build.js";

describe("assure keys (operator CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-cli-"));
  const env = { ASSURE_DB: join(dir, "assure.db") };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates an admin key whose token is shown once and stored only as a hash", async () => {
    const created = await runCli(["keys", "create", "--admin", "--name", "bootstrap"], env);
    expect(created.status).toBe(0);
    const key = created.json();
    expect(key.token).toMatch(/^assure_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ project_id: null, name: "bootstrap", revoked_at: null });
    expect(key.scopes).toContain("projects:write");

    const listed = await runCli(["keys", "list"], env);
    expect(listed.stdout).not.toContain(key.token.split("_").at(-1));
    expect(listed.json().map((k: { key_id: string }) => k.key_id)).toContain(key.key_id);
  });

  it("creates a project key with exactly the scopes asked for, and refuses bad requests with exit 2", async () => {
    const store = await openStore(env.ASSURE_DB, { clock: systemClock });
    await store.createProject({
      project_id: "prj_cli",
      name: "cli",
      description: null,
      created_at: new Date().toISOString(),
    });
    await store.close();

    const created = await runCli(
      ["keys", "create", "--project", "prj_cli", "--scopes", "runs:read,evidence:read"],
      env,
    );
    expect(created.status).toBe(0);
    expect(created.json()).toMatchObject({ project_id: "prj_cli", scopes: ["runs:read", "evidence:read"] });

    for (const args of [
      ["keys", "create", "--project", "prj_cli", "--scopes", "runs:fly"],
      ["keys", "create", "--project", "prj_cli"],
      ["keys", "create", "--project", "prj_missing", "--scopes", "runs:read"],
      ["keys", "create", "--project", "prj_cli", "--scopes", "projects:write"],
      ["keys", "create", "--admin", "--project", "prj_cli"],
      ["keys", "create"],
      ["keys", "explode"],
      ["keys", "create", "--bogus"],
    ]) {
      const result = await runCli(args, env);
      expect(result.status).toBe(2);
      expect(result.stderr.length).toBeGreaterThan(0);
    }
  });

  it("revokes a key", async () => {
    const key = (await runCli(["keys", "create", "--admin"], env)).json();
    const revoked = await runCli(["keys", "revoke", key.key_id], env);
    expect(revoked.json()).toEqual({ key_id: key.key_id, revoked: true, already_revoked: false });
    expect((await runCli(["keys", "revoke", key.key_id], env)).json().already_revoked).toBe(true);
    expect((await runCli(["keys", "revoke", "key_nope"], env)).status).toBe(2);
  });
});

describe("npx assure, as the README runs it", () => {
  // A copy of the package's layout in its own folder (sources and node_modules linked), so that
  // rebuilding it cannot disturb the build the other tests run.
  const root = mkdtempSync(join(tmpdir(), "assure-npx-"));
  const checkout = fileURLToPath(new URL("../../..", import.meta.url));
  for (const entry of ["package.json", "app", "server", "examples", "scripts", "node_modules"]) {
    symlinkSync(join(checkout, entry), join(root, entry));
  }
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? root, ASSURE_DB: join(root, "assure.db") };
  const npxAssure = () =>
    spawnSync("npx", ["--no-install", "assure", "keys", "list"], { cwd: root, env, encoding: "utf8" });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("keeps working after the service is rebuilt (npm start rebuilds first)", async () => {
    await buildService({ root });
    const first = npxAssure();
    expect(first.stderr).not.toMatch(/Permission denied/);
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual([]);

    await buildService({ root }); // what `npm start` does before it starts the service
    const again = npxAssure();
    expect(again.stderr).not.toMatch(/Permission denied/);
    expect(again.status).toBe(0);
  });
});
