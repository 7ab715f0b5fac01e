import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { ROOT } from "../../helpers/assure-cli.js";

const run = promisify(execFile);
/** Installing the package compiles the SQLite driver: minutes on a loaded machine. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

describe("the package: npm pack, then npm install in an empty folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "assure-package-"));
  const checkout = join(dir, "checkout");
  const project = join(dir, "empty");
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir };
  let agent: ExampleAgent;
  let tarball: string;

  const npx = (args: string[]) =>
    run("npx", ["--no-install", "assure", ...args], { cwd: project, env, timeout: 120_000 }).then(
      ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ ...error, status: error.code }),
    );

  beforeAll(async () => {
    agent = await startExampleAgent();
    // A copy of the working tree (its node_modules linked), so that packing (which builds) cannot
    // disturb the build the other tests run.
    const { stdout } = await run("git", ["ls-files", "-co", "--exclude-standard"], { cwd: ROOT, maxBuffer: 1 << 26 });
    for (const file of stdout.split("\n").filter(Boolean)) {
      if (!existsSync(join(ROOT, file))) continue;
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(checkout, file));
    }
    symlinkSync(join(ROOT, "node_modules"), join(checkout, "node_modules"));
    await run("npm", ["pack", "--pack-destination", dir], { cwd: checkout, env, timeout: 120_000 });
    tarball = join(
      dir,
      readdirSync(dir).find((name) => name.endsWith(".tgz"))!,
    );
    mkdirSync(project);
    // From the npm cache the tests' own install filled, going to the registry only for what it lacks.
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], {
      cwd: project,
      env,
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 1 << 26,
    });
  }, INSTALL_TIMEOUT_MS + 180_000);
  afterAll(async () => {
    await agent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ships the built CLI and its pinned dependencies, never the development ones", () => {
    const installed = join(project, "node_modules");
    const manifest = JSON.parse(readFileSync(join(installed, "assure/package.json"), "utf8"));
    expect(manifest.bin).toEqual({ assure: "build/app/cli.js" });
    expect(existsSync(join(installed, "assure/build/app/cli-test.js"))).toBe(true);
    expect(existsSync(join(installed, "assure/app"))).toBe(false); // no sources, no build step
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    const shrinkwrap = JSON.parse(readFileSync(join(installed, "assure/npm-shrinkwrap.json"), "utf8"));
    expect(shrinkwrap.packages["node_modules/zod"]).toEqual(lock.packages["node_modules/zod"]);
    for (const dependency of ["zod", "better-sqlite3", "yaml", "xmlbuilder2"]) {
      const version = JSON.parse(readFileSync(join(installed, dependency, "package.json"), "utf8")).version;
      expect({ dependency, version }).toEqual({
        dependency,
        version: lock.packages[`node_modules/${dependency}`].version,
      });
    }
    for (const development of ["jest", "typescript", "esbuild", "eslint", "xmllint-wasm"]) {
      expect({ development, installed: existsSync(join(installed, development)) }).toEqual({
        development,
        installed: false,
      });
    }
  });

  it("answers --help on stdout and --version, for every command", async () => {
    const version = await npx(["--version"]);
    expect(version).toMatchObject({
      status: 0,
      stdout: `${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`,
    });
    const help = await npx(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: assure <command>/);
    for (const command of ["test", "validate", "init", "keys", "db"]) {
      const commandHelp = await npx([command, "--help"]);
      expect({ command, status: commandHelp.status }).toEqual({ command, status: 0 });
      expect(commandHelp.stdout).toMatch(/^Usage:/);
    }
  });

  it("goes from an empty folder to a verdict on an agent: init, validate, test", async () => {
    const init = await npx(["init", "--agent", agent.baseUrl]);
    expect(init.status).toBe(0);
    expect((await npx(["validate"])).status).toBe(0);
    const test = await npx(["test", "--agent", agent.baseUrl, "--junit", "assure.xml"]);
    expect(test.stderr).not.toMatch(/Error/);
    expect(test.status).toBe(0);
    expect(test.stdout).toMatch(/Release allowed: 1 of 1 gate passed/);
    expect(readFileSync(join(project, "assure.xml"), "utf8")).toMatch(/<testsuite name="smoke"/);
  });
});
