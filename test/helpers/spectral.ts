import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = createRequire(import.meta.url).resolve("@stoplight/spectral-cli/dist/index.js");

/** Lints an OpenAPI document with Spectral (`.spectral.yaml` at the root: the spectral:oas ruleset); its problems. */
export function spectralProblems(file: string): { code: string; severity: number; message: string; path: string[] }[] {
  const result = spawnSync(
    process.execPath,
    [CLI, "lint", file, "--format", "json", "--quiet", "--ruleset", ".spectral.yaml"],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  const start = result.stdout.indexOf("[");
  if (start < 0) throw new Error(`Spectral did not report: ${result.stderr || result.stdout}`);
  return JSON.parse(result.stdout.slice(start)) as {
    code: string;
    severity: number;
    message: string;
    path: string[];
  }[];
}
