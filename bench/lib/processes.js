// Child processes of the bench: the service, the baseline and the CLI, all on 127.0.0.1.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export const HOST = "127.0.0.1";
const STARTUP_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

/** A port that was free a moment ago: the OS picks it, we release it for the child to take. */
export function findFreePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Only what the children need: a variable inherited from the caller's shell (an egress
 * allowlist, GitHub App settings) would change what is measured.
 */
function childEnvironment(extra) {
  return { PATH: process.env.PATH ?? "", ...extra };
}

const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * The node arguments the service runs with, as `npm start` passes them (package.json
 * `config.node_args`, as app/service-node-args.ts reads them). Every Node process of the bench
 * (the service, the baselines, the example agent) runs with them, so V8's settings favour no side.
 */
export const NODE_ARGS = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).config?.node_args ?? ""
)
  .split(/\s+/)
  .filter(Boolean);

/** Starts `node <script>` listening on a free port and resolves once GET /healthz answers 200; `nodeArgs` are added to NODE_ARGS. */
export async function startServer(name, script, env, { nodeArgs = [] } = {}) {
  const port = await findFreePort();
  const child = spawn(process.execPath, [...NODE_ARGS, ...nodeArgs, script], {
    env: childEnvironment({ ...env, PORT: String(port), HOST }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const keep = (chunk) => {
    output = (output + chunk).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.once("exit", () => running.delete(child));

  const url = `http://${HOST}:${port}`;
  try {
    await waitForHealth(url, exited);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${name} did not start: ${error.message}\n--- its output ---\n${output}`, { cause: error });
  }
  return {
    name,
    url,
    pid: child.pid,
    output: () => output,
    stop: () => stopChild(child, exited),
    /** SIGKILL: no chance to flush or close anything; resolves once it has exited. */
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Starts the example agent (`node build/examples/agent/main.js`) on a port the OS picks and
 * resolves with its base URL, read from the JSON line it prints once listening. `latencyMs`:
 * how long each of its answers takes (AGENT_LATENCY_MS), as a model's would; `env`: more of its
 * settings (AGENT_PROTOCOL=http, the OTEL_EXPORTER_OTLP_* variables).
 */
export async function startExampleAgent(script, { latencyMs = 0, env = {} } = {}) {
  const child = spawn(process.execPath, [...NODE_ARGS, script], {
    env: childEnvironment({ ...env, PORT: "0", HOST, AGENT_LATENCY_MS: String(latencyMs) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.once("exit", () => running.delete(child));
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no base_url within ${STARTUP_TIMEOUT_MS} ms`)),
      STARTUP_TIMEOUT_MS,
    );
    const keep = (chunk) => {
      output = (output + chunk).slice(-20_000);
      const found = /"base_url":"([^"]+)"/.exec(output)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited early (code ${code}, signal ${signal})`));
    });
  }).catch((error) => {
    child.kill("SIGKILL");
    throw new Error(`the example agent did not start: ${error.message}\n--- its output ---\n${output}`);
  });
  return {
    name: "example agent",
    baseUrl,
    pid: child.pid,
    output: () => output,
    stop: () => stopChild(child, exited),
  };
}

/** SIGTERM, then SIGKILL if the child has not exited within STOP_TIMEOUT_MS. */
async function stopChild(child, exited) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const stopped = await Promise.race([exited, sleep(STOP_TIMEOUT_MS, "timeout")]);
  if (stopped === "timeout") child.kill("SIGKILL");
}

async function waitForHealth(url, exited) {
  let exit;
  void exited.then((value) => (exit = value));
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exit) throw new Error(`exited early (code ${exit.code}, signal ${exit.signal})`);
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`no answer from ${url}/healthz within ${STARTUP_TIMEOUT_MS} ms`);
}

/**
 * Starts `node <script>` that speaks JSON lines: it prints one line once ready, then answers each
 * line written to its stdin with one line. Resolves once it is ready.
 */
export async function startLineWorker(name, script, env) {
  const child = spawn(process.execPath, [...NODE_ARGS, script], {
    env: childEnvironment(env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-20_000)));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.once("exit", () => running.delete(child));
  const waiting = [];
  let buffered = "";
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      waiting.shift()?.resolve(JSON.parse(line));
    }
  });
  void exited.then(({ code, signal }) => {
    for (const { reject } of waiting.splice(0)) {
      reject(new Error(`${name} exited (code ${code}, signal ${signal})\n--- its output ---\n${stderr}`));
    }
  });
  const nextLine = () => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  await nextLine();
  return {
    request(message) {
      const answer = nextLine();
      child.stdin.write(`${JSON.stringify(message)}\n`);
      return answer;
    },
    stop: () => stopChild(child, exited),
  };
}

/** Runs the service's CLI to completion and returns its JSON output. */
export function runCli(cliScript, args, env) {
  const stdout = execFileSync(process.execPath, [cliScript, ...args], {
    env: childEnvironment(env),
    encoding: "utf8",
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}

/**
 * Pins a process and its threads to `cpus` (a taskset list, "1" or "0-2") so that the load
 * generator and the process it measures do not take turns on one core. Linux with taskset only;
 * false where it cannot.
 */
export function pinToCpus(pid, cpus) {
  try {
    execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", cpus, String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
