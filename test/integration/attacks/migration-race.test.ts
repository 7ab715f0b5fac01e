import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "@jest/globals";
import { spawnService } from "../../helpers/child-service.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** The operator CLI as a child process, started now: its exit code and what it wrote to stderr. */
function cli(args: string[], env: Record<string, string>) {
  return new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["build/app/cli.js", ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (status) => resolve({ status, stderr }));
  });
}

/** The adversarial review's finding 11 (issue: "The gate holds"): processes migrating one fresh database at once. */
describe("finding 11: a migration race", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-migrate-race-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("migrates a fresh database once when the service and several CLIs start on it together", async () => {
    for (let round = 0; round < 3; round++) {
      const env = { ASSURE_DB: join(dir, `race-${round}.db`) };
      const [service, ...clis] = await Promise.all([
        spawnService(env).catch((error: Error) => error),
        ...[1, 2, 3, 4].map(() => cli(["keys", "create", "--admin"], env)),
      ]);
      const stopped = service instanceof Error ? service : await service.stop();
      for (const run of clis) expect([run.status, run.stderr]).toEqual([0, ""]);
      expect(stopped).toBe(0);
    }
  });
});
