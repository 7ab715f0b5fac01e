import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { readServiceNodeArgs } from "../../app/service-node-args.js";
import { LOCAL_SETTINGS } from "./local-settings.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ChildService {
  baseUrl: string;
  process: ChildProcess;
  logs: string[];
  /** SIGKILL: no chance to flush or close anything. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for a clean exit. */
  stop(): Promise<number | null>;
}

/**
 * Runs the built service (`build/app/main.js`, rebuilt by jest's global setup) as a child
 * process, as `npm start` does, and waits until it says where it listens.
 */
export async function spawnService(
  env: Record<string, string>,
  { fileSizeLimitKiB }: { fileSizeLimitKiB?: number } = {},
): Promise<ChildService> {
  const command = [process.execPath, ...readServiceNodeArgs(ROOT), "build/app/main.js"];
  // Under a soft file-size limit (ulimit -S -f, KiB in bash; prlimit can lift it): a write past it fails with EFBIG, as on a full disk (Node ignores SIGXFSZ).
  const [file, ...args] =
    fileSizeLimitKiB === undefined
      ? command
      : ["/bin/bash", "-c", `ulimit -S -f ${fileSizeLimitKiB} && exec "$0" "$@"`, ...command];
  const child = spawn(file!, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...LOCAL_SETTINGS, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // A start on a loaded 2-core machine (the suite's other files building and serving) takes seconds.
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${logs.join("\n")}`)), 45_000);
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        logs.push(line);
        const port = /"port":(\d+)/.exec(line)?.[1];
        if (port) {
          clearTimeout(timer);
          resolve(Number(port));
        }
      }
    };
    child.stdout!.on("data", onLine);
    child.stderr!.on("data", onLine);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${logs.join("\n")}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    process: child,
    logs,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Runs the operator CLI (`npx assure …` from a checkout) and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string>) {
  // Not spawnSync: a test's in-process service must go on answering (and closing idle connections) meanwhile.
  const child = spawn(process.execPath, ["build/app/cli.js", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const status = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  return { status, stdout, stderr, json: () => JSON.parse(stdout) };
}
