import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@jest/globals";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const BUNDLE = join(ROOT, "action/dist/index.cjs");

/** Node on the committed bundle, with no Action inputs: the step fails at once if the Action runs. */
function node(args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("INPUT_")));
  return spawnSync(process.execPath, args, { cwd: ROOT, env: { ...env, GITHUB_ACTIONS: "true" }, encoding: "utf8" });
}

describe("the Action's bundle, as shipped", () => {
  it("runs the Action when the runner executes it", () => {
    const ran = node([BUNDLE]);
    expect(ran.stdout).toMatch(/^::error::/m); // the Action ran and failed its step: no api-url given
    expect(ran.status).toBe(1);
  });

  it("exports run() and does nothing on load, as a tool that loads actions (@github/local-action) expects", () => {
    const loaded = node(["-e", `const action = require(${JSON.stringify(BUNDLE)}); console.log(typeof action.run);`]);
    expect(loaded.stdout.trim()).toBe("function");
    expect(loaded.stdout).not.toMatch(/::error::/);
    expect(loaded.status).toBe(0);
  });

  it("runs the Action when run() is called", async () => {
    const called = node([
      "-e",
      `require(${JSON.stringify(BUNDLE)}).run().then(() => console.log("returned", process.exitCode));`,
    ]);
    expect(called.stdout).toMatch(/^::error::/m);
    expect(called.stdout).toMatch(/^returned 1$/m); // it reports the failure on the step, and never throws
  });
});
