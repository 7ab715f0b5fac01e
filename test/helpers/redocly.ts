import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");

/** Runs Redocly CLI (`redocly.yaml` at the root is its configuration), offline and quiet. */
export function redocly(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    // A diff's JSON report of a large change runs past the default 1 MiB.
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      REDOCLY_TELEMETRY: "off",
      REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
      REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
    },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
