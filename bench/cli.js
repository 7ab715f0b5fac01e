// The local runner part of `npm run bench` (also alone: `node bench/run.js cli`).
// `assure test` as a user runs it (`node build/app/cli.js test …`, no node arguments) on single-turn
// cases against the example agent: its wall time from spawn to exit, its peak memory, and how soon
// after it starts the agent gets its first request; beside it, when it is installed, promptfoo's
// `eval` of the same cases at the same concurrency (side by side, alternating which goes first).
// Both reach the agent through a recording proxy in this process. See docs/benchmarks.md, "assure test".
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchSpec } from "./engine.js";
import { startExampleAgent } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 3);
/** promptfoo's bin (dist/src/entrypoint.js of promptfoo 0.123) and a Node ≥ 22 to run it with; unset: not measured. */
const PROMPTFOO = process.env.BENCH_PROMPTFOO;
const PROMPTFOO_NODE = process.env.BENCH_PROMPTFOO_NODE ?? process.execPath;
const RUN_TIMEOUT_MS = 10 * 60_000;

export const CLI_TARGETS = { fastRatio: 0.3, slowRatio: 1.0, rssMb: 150, firstRequestMs: 1000 };

function levels() {
  return [
    {
      name: "200 cases, agent answers at once",
      cases: 200,
      latencyMs: 0,
      concurrency: 16,
      target: CLI_TARGETS.fastRatio,
    },
    {
      name: "100 cases, agent answers in 200 ms",
      cases: 100,
      latencyMs: 200,
      concurrency: 16,
      target: CLI_TARGETS.slowRatio,
    },
  ];
}

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");

export function describeCliBench() {
  return (
    `assure test: ${levels()
      .map((l) => `${l.cases} single-turn cases (example agent, ${l.latencyMs} ms) at concurrency ${l.concurrency}`)
      .join("; ")}; ${ROUNDS} rounds each, medians; ` +
    (PROMPTFOO
      ? `beside promptfoo eval -j 16 run by ${PROMPTFOO_NODE}`
      : "promptfoo not measured (BENCH_PROMPTFOO unset)")
  );
}

/** A proxy in front of the agent that notes when the first completion request arrives (ms after `since`). */
async function startRecordingProxy(target) {
  const upstream = new URL(target);
  let since = 0;
  let first;
  const server = createServer((req, res) => {
    if (req.method === "POST" && first === undefined) first = performance.now() - since;
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}${upstream.pathname}`,
    start() {
      since = performance.now();
      first = undefined;
    },
    get firstRequestMs() {
      return first;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Runs a command to its end: its wall time, its peak RSS (VmHWM, read every 10 ms) and exit code. */
function measure(command, args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk) => (output = (output + chunk).slice(-20_000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let peakRssMb = 0;
    const poll = setInterval(() => {
      const { peakRssMb: now } = readProc(child.pid);
      if (now > peakRssMb) peakRssMb = now;
    }, 10);
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ code, wallMs: performance.now() - started, peakRssMb, output });
    });
  });
}

async function runAssure(root, workdir, level, proxy) {
  const spec = join(workdir, `bench-${level.cases}.json`);
  writeFileSync(spec, JSON.stringify(benchSpec(level.cases, level.concurrency)));
  proxy.start();
  const result = await measure(
    process.execPath,
    [join(root, "build/app/cli.js"), "test", spec, "--agent", proxy.baseUrl, "--quiet"],
    { cwd: workdir, env: { HOME: workdir } },
  );
  if (result.code !== 0 || !/Release allowed/.test(result.output)) {
    throw new Error(`assure test exited ${result.code}:\n${result.output}`);
  }
  return { ...result, firstRequestMs: proxy.firstRequestMs };
}

async function runPromptfoo(workdir, level, proxy) {
  const config = join(workdir, `promptfoo-${level.cases}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      description: `bench-${level.cases}-cases`,
      providers: [{ id: "openai:chat:refund-agent", config: { apiBaseUrl: proxy.baseUrl, apiKey: "none" } }],
      prompts: ["Hello, this is case {{n}}."],
      tests: Array.from({ length: level.cases }, (_, i) => ({
        vars: { n: i + 1 },
        assert: [{ type: "regex", value: "help" }],
      })),
    }),
  );
  proxy.start();
  const result = await measure(
    PROMPTFOO_NODE,
    [PROMPTFOO, "eval", "-c", config, "-j", String(level.concurrency), "--no-cache", "--no-progress-bar", "--no-table"],
    {
      cwd: workdir,
      env: {
        HOME: workdir,
        PROMPTFOO_CONFIG_DIR: join(workdir, ".promptfoo"),
        PROMPTFOO_DISABLE_TELEMETRY: "1",
        PROMPTFOO_DISABLE_UPDATE: "1",
      },
    },
  );
  if (result.code !== 0 || !new RegExp(`${level.cases} passed`).test(result.output)) {
    throw new Error(`promptfoo eval exited ${result.code}:\n${result.output}`);
  }
  return { ...result, firstRequestMs: proxy.firstRequestMs };
}

export async function runCliBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-cli-"));
  const promptfoo = PROMPTFOO && existsSync(PROMPTFOO);
  if (PROMPTFOO && !promptfoo) log(`BENCH_PROMPTFOO=${PROMPTFOO} does not exist: promptfoo is not measured`);
  const rows = [];
  const targets = [];
  try {
    for (const level of levels()) {
      const agent = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs: level.latencyMs });
      const proxy = await startRecordingProxy(agent.baseUrl);
      const assure = [];
      const other = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          log(`assure test, ${level.name}: round ${round + 1} of ${ROUNDS}…`);
          const sides = [() => runAssure(root, workdir, level, proxy).then((r) => assure.push(r))];
          if (promptfoo) sides.push(() => runPromptfoo(workdir, level, proxy).then((r) => other.push(r)));
          if (round % 2 === 1) sides.reverse();
          for (const side of sides) await side();
        }
      } finally {
        await proxy.close();
        await agent.stop();
      }
      const ours = {
        wallMs: median(assure.map((r) => r.wallMs)),
        rssMb: Math.max(...assure.map((r) => r.peakRssMb)),
        firstMs: median(assure.map((r) => r.firstRequestMs)),
      };
      const theirs = other.length
        ? {
            wallMs: median(other.map((r) => r.wallMs)),
            rssMb: Math.max(...other.map((r) => r.peakRssMb)),
            firstMs: median(other.map((r) => r.firstRequestMs)),
          }
        : undefined;
      const ratio = theirs ? ours.wallMs / theirs.wallMs : Number.NaN;
      rows.push([
        level.name,
        fixed(ours.wallMs / 1000, 2),
        fixed(ours.firstMs, 0),
        fixed(ours.rssMb, 0),
        theirs ? fixed(theirs.wallMs / 1000, 2) : "n/a",
        theirs ? fixed(theirs.firstMs, 0) : "n/a",
        theirs ? fixed(theirs.rssMb, 0) : "n/a",
        fixed(ratio, 2),
      ]);
      targets.push(
        theirs
          ? `${verdict(ratio <= level.target)} ${level.name}: assure test wall time = ${fixed(ratio, 2)} x promptfoo eval -j ${level.concurrency} (target <= ${level.target})`
          : `n/a  ${level.name}: the ratio to promptfoo needs BENCH_PROMPTFOO (docs/benchmarks.md)`,
      );
      if (level.latencyMs === 0) {
        targets.push(
          `${verdict(ours.rssMb <= CLI_TARGETS.rssMb)} ${level.name}: assure test peak RSS = ${fixed(ours.rssMb, 0)} MB (target <= ${CLI_TARGETS.rssMb})`,
          `${verdict(ours.firstMs <= CLI_TARGETS.firstRequestMs)} ${level.name}: first agent request ${fixed(ours.firstMs, 0)} ms after start (target <= ${CLI_TARGETS.firstRequestMs})`,
        );
      }
    }
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
  console.log(
    markdownTable(
      [
        "Level",
        "assure test s",
        "first request ms",
        "peak RSS MB",
        "promptfoo s",
        "first request ms",
        "peak RSS MB",
        "wall ratio",
      ],
      rows,
    ),
  );
  console.log("");
  for (const line of targets) console.log(line);
}
