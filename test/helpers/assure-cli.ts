import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The bin as the package ships it (rebuilt from the sources by jest's global setup). */
export const ASSURE_BIN = `${ROOT}build/app/cli.js`;

export interface AssureOptions {
  cwd?: string;
  /** Environment variables beyond PATH and HOME: nothing else of the test's environment leaks in. */
  env?: Record<string, string>;
}

/**
 * How long `runAssure` waits for the command before killing it: under a test's own timeout, so a
 * command that hangs fails its test with what it printed, and leaves no process behind to keep
 * jest from exiting.
 */
const RUN_TIMEOUT_MS = 50_000;

const environment = (env: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  ...env,
});

/** Runs `assure …` as a child process to its end: its exit code and output. */
export async function runAssure(args: string[], { cwd = ROOT, env }: AssureOptions = {}) {
  const child = spawn(process.execPath, [ASSURE_BIN, ...args], {
    cwd,
    env: environment(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => {
    stderr += `\n[killed: still running after ${RUN_TIMEOUT_MS} ms]`;
    child.kill("SIGKILL");
  }, RUN_TIMEOUT_MS);
  const status = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  }).finally(() => clearTimeout(killer));
  return { status, stdout, stderr };
}

export interface RunningAssure {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Waits until stdout (or stderr) matches, and returns the match. */
  waitForOutput(pattern: RegExp, what: string, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `assure …` that keeps running (--open, --watch) and reads its output as it comes. */
export function startAssure(args: string[], { cwd = ROOT, env }: AssureOptions = {}): RunningAssure {
  const child = spawn(process.execPath, [ASSURE_BIN, ...args], {
    cwd,
    env: environment(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    waitForOutput: (pattern, what, timeoutMs = 30_000) =>
      waitFor(() => stdout.match(pattern) ?? stderr.match(pattern), `${what}\nstdout: ${stdout}\nstderr: ${stderr}`, {
        timeoutMs,
        everyMs: 25,
      }),
    async stop(signal = "SIGINT") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
