import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "@jest/globals";
import { LOCAL_SETTINGS } from "../../helpers/local-settings.js";
import { waitFor } from "../../helpers/wait.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

describe("npm start", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-start-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("stops the service when it is stopped: SIGTERM reaches the service, which drains and exits", async () => {
    // The bundle is built by the suite's setup: prestart's build is skipped here.
    const npm = spawn("npm", ["start", "--ignore-scripts", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, ...LOCAL_SETTINGS, HOST: "127.0.0.1", PORT: "0", ASSURE_DB: join(dir, "assure.db") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const logs: string[] = [];
    npm.stdout.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.once("exit", resolve));
    const port = await waitFor(() => /"port":(\d+)/.exec(logs.join(""))?.[1], "the service to listen", {
      timeoutMs: 30_000,
    });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    npm.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(logs.join("")).toContain("Received SIGTERM; draining");
    // Nothing listens any more: the service stopped with npm, not left behind.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
