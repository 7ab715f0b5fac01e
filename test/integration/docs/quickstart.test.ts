import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "@jest/globals";
import { marked, type Tokens } from "marked";
import { waitFor } from "../../helpers/wait.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** The shell block under the README's quickstart heading, as a reader copies it. */
function quickstart(): string {
  const tokens = marked.lexer(readFileSync(join(ROOT, "README.md"), "utf8"));
  const heading = tokens.findIndex((t) => t.type === "heading" && (t as Tokens.Heading).text.startsWith("Quickstart"));
  const block = tokens.slice(heading).find((t): t is Tokens.Code => t.type === "code");
  if (heading < 0 || !block) throw new Error("the README has no quickstart block");
  return block.text;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe("the README's quickstart", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-quickstart-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("works as written: it prints the verdict, the gate and the run's page, and stops what it started", async () => {
    const [port, agentPort] = [await freePort(), await freePort()];
    // As a reader runs it after npm ci, from the repository's root (the suite's setup built the service:
    // npm start's prestart build is skipped).
    const shell = spawn("bash", ["-e", "-c", quickstart()], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        PORT: String(port),
        AGENT_PORT: String(agentPort),
        ASSURE_DB: join(dir, "quickstart.db"),
        npm_config_ignore_scripts: "true",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    shell.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => shell.once("exit", resolve));

    expect([code, out]).toEqual([0, expect.stringContaining("PASS\nDET: passed\n")]);
    const page = new RegExp(`^http://127\\.0\\.0\\.1:${port}/runs/run_\\w+\\?exp=\\d+&sig=[\\w-]{43}$`, "m");
    expect(out).toMatch(page);
    // What it started stops with the shell (signalled as the shell exits; each drains first).
    const closed = (url: string) =>
      fetch(url).then(
        () => false,
        () => true,
      );
    await waitFor(() => closed(`http://127.0.0.1:${port}/healthz`), "the service to stop", { timeoutMs: 30_000 });
    await waitFor(() => closed(`http://127.0.0.1:${agentPort}/v1/models`), "the agent to stop", { timeoutMs: 30_000 });
  });
});
