// The run engine part of `npm run bench` (also alone: `node bench/run.js engine`).
// Rounds of 200 runs of examples/refund-agent-deterministic.yaml (repeat 1) against the example
// agent in its own process, with the service's engine at concurrency 1, 4 and 16, alternating
// with a bare client loop making the same agent calls with no persistence
// (bench/lib/agent-client.js) in a process of its own (bench/engine-baseline.js). Both start
// fresh per level and warm up alike. See docs/benchmarks.md, "Run engine".
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { parse as parseYaml } from "yaml";
import { makeApiClient } from "./lib/fixture.js";
import { makeConversationClient } from "./lib/agent-client.js";
import { runCli, startExampleAgent, startLineWorker, startServer } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";

export const ENGINE_RUNS = Number(process.env.BENCH_ENGINE_RUNS ?? 200);
export const ENGINE_CONCURRENCY = (process.env.BENCH_ENGINE_CONCURRENCY ?? "1,4,16").split(",").map(Number);
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;
/**
 * Diagnostics, not for the figures: node arguments for the measured service, e.g.
 * `BENCH_ENGINE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`, and its ASSURE_DB_SYNCHRONOUS.
 */
const SERVICE_NODE_ARGS = (process.env.BENCH_ENGINE_NODE_ARGS ?? "").split(" ").filter(Boolean);
const SERVICE_EXTRA_ENV = process.env.BENCH_ENGINE_DB_SYNCHRONOUS ? { ASSURE_DB_SYNCHRONOUS: process.env.BENCH_ENGINE_DB_SYNCHRONOUS } : {};
/**
 * Per level, before measuring, for the service and the baseline alike: both start as fresh
 * processes, and these runs let V8 optimise their hot code before the clock starts (with fewer,
 * both are still measured mostly while being compiled).
 */
const WARMUP_RUNS = 500;
/**
 * Rounds per level, alternating which side goes first (S B, B S, S B, …): a change in the
 * machine's speed during a level weighs on both alike. Figures are medians over the rounds.
 */
const ROUNDS = Number(process.env.BENCH_ENGINE_ROUNDS ?? 5);
const POSTERS = 4; // parallel POST /v1/runs while creating the runs
const POLL_MS = 50;
const LEVEL_TIMEOUT_MS = 90_000; // per batch of runs: they normally finish in a few seconds
const MODEL = "refund-agent";
/** run_at of the held jobs of a round: later than any real time, and one value per round. */
const heldUntil = (round) => `9999-12-31T23:59:59.${String(round).padStart(3, "0")}Z`;
const HELD_FROM = heldUntil(0);

export const ENGINE_TARGETS = { ratioAtConcurrency: 16, ratio: 0.7, overheadMs: 2, rssMb: 200 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");

/** The spec with `defaults.repeat: 1`: one conversation per scenario and run. */
function loadSpec(path) {
  const original = readFileSync(path, "utf8");
  const text = original.replace(/^(defaults:\n(?:[ \t]+\S.*\n)*?[ \t]+repeat:[ \t]*)\d+/m, (_, head) => `${head}1`);
  const spec = parseYaml(text);
  if (spec.defaults?.repeat !== 1 || (spec.scenarios ?? []).some((s) => s.repeat !== undefined)) {
    throw new Error(`Could not set defaults.repeat to 1 in ${path}`);
  }
  return text;
}

async function listAll(call, path) {
  const items = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const separator = path.includes("?") ? "&" : "?";
    const { json } = await call("GET", `${path}${separator}limit=200${cursor ? `&cursor=${cursor}` : ""}`);
    items.push(...json.data);
    if (!json.next_cursor) return items;
    cursor = json.next_cursor;
  }
  throw new Error(`${path}: more than 100 pages`);
}

async function setUp(call, agentBaseUrl, specText) {
  const project = (await call("POST", "/v1/projects", { body: { name: "bench-engine" } })).json;
  const agent = (await call("POST", "/v1/agents", { body: { project_id: project.project_id, name: "refund-agent", version: "1.0.0" } })).json;
  const environment = (
    await call("POST", "/v1/environments", {
      body: {
        project_id: project.project_id,
        name: "local",
        agent_id: agent.agent_id,
        endpoint: { protocol: "openai-chat", base_url: agentBaseUrl, model: MODEL },
      },
    })
  ).json;
  const spec = (
    await call("POST", `/v1/test-specs?project_id=${project.project_id}`, { body: specText, contentType: "application/yaml" })
  ).json;
  // The document as the service stored it (canonical JSON: keys sorted), which the engine reads
  // and the baseline must use too, so that tool results are serialised alike.
  const stored = (await call("GET", `/v1/test-specs/${spec.test_spec_id}`)).json;
  return { runBody: { test_spec_id: spec.test_spec_id, environment_id: environment.environment_id }, spec: stored.spec };
}

/** Creates `count` runs through the API, POSTERS requests at a time; returns their ids in order. */
async function createRuns(call, runBody, { count, keyPrefix }) {
  const runIds = new Array(count);
  let next = 0;
  const poster = async () => {
    while (next < count) {
      const index = next++;
      const { json } = await call("POST", "/v1/runs", { body: runBody, headers: { "idempotency-key": `${keyPrefix}-${index}` } });
      runIds[index] = json.run_id;
    }
  };
  await Promise.all(Array.from({ length: POSTERS }, poster));
  return runIds;
}

/** Polls the job queue (a read of the SQLite file: no load on the service) until the query counts 0. */
async function waitForNoJobs(db, sql, params, what) {
  const count = db.prepare(sql).pluck();
  const deadline = Date.now() + LEVEL_TIMEOUT_MS;
  while (count.get(...params) > 0) {
    if (Date.now() > deadline) {
      const jobs = db.prepare("SELECT state, attempts, run_at, locked_until, last_error FROM jobs LIMIT 5").all();
      const runs = db.prepare("SELECT status, COUNT(*) AS n FROM runs GROUP BY status").all();
      throw new Error(
        `${what} did not finish within ${LEVEL_TIMEOUT_MS / 1000} s; runs by status: ${JSON.stringify(runs)}; ` +
          `jobs left: ${JSON.stringify(jobs)}`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Every listed run of `runIds` must have ended COMPLETED with verdict PASS. */
function checkRuns(runs, runIds, label) {
  const byId = new Map(runs.map((run) => [run.run_id, run]));
  const missing = runIds.filter((id) => !byId.has(id));
  const bad = runIds.map((id) => byId.get(id)).filter((run) => run && (run.status !== "COMPLETED" || run.verdict !== "PASS"));
  return [
    ...(missing.length > 0 ? [`${missing.length} ${label} runs missing from the run list`] : []),
    ...bad
      .slice(0, 3)
      .map((run) => `${label} run ${run.run_id} ended ${run.status}/${run.verdict}${run.failure ? ` (${run.failure.cause}: ${run.failure.message})` : ""}`),
    ...(bad.length > 3 ? [`${bad.length} ${label} runs in all did not end COMPLETED/PASS`] : []),
  ];
}

/**
 * The messages of every agent request of a run, rebuilt from its trace (message.sent,
 * message.received, tool.called, tool.returned), grouped by conversation.
 */
function requestsFromTrace(events) {
  const argumentsById = new Map(events.filter((e) => e.type === "tool.called").map((e) => [e.data.call_id, e.data.arguments_raw]));
  const conversations = new Map();
  for (const { type, data } of events) {
    if (!data.conversation_id) continue;
    if (!conversations.has(data.conversation_id)) conversations.set(data.conversation_id, { messages: [], requests: [] });
    const conversation = conversations.get(data.conversation_id);
    if (type === "message.sent") conversation.messages.push({ role: data.role, content: data.content });
    if (type === "message.received") {
      conversation.requests.push(structuredClone(conversation.messages));
      const assistant = { role: "assistant", content: data.content };
      if (data.tool_calls.length > 0) {
        assistant.tool_calls = data.tool_calls.map((c) => ({
          id: c.call_id,
          type: "function",
          function: { name: c.name, arguments: argumentsById.get(c.call_id) },
        }));
      }
      conversation.messages.push(assistant);
    }
    if (type === "tool.returned") conversation.messages.push({ role: "tool", content: JSON.stringify(data.result), tool_call_id: data.call_id });
  }
  return [...conversations.values()].map((c) => c.requests);
}

/** The agent numbers its tool call ids across all requests: compare them by order of appearance. */
function normaliseIds(requests) {
  const ids = new Map();
  return JSON.stringify(requests).replace(/call_\d+/g, (id) => {
    if (!ids.has(id)) ids.set(id, `call_#${ids.size + 1}`);
    return ids.get(id);
  });
}

/**
 * One database for every level: project, agent, environment, spec and the queued runs (warm-up,
 * then ROUNDS × ENGINE_RUNS), created through the API of a service whose engine is off
 * (ASSURE_WORKERS=0). Each round's jobs are then held (run_at far in the future), so that a
 * service started on a copy runs the warm-up runs first and a round only when the bench
 * releases it.
 */
async function prepareDatabase({ root, agent, specText, dbPath }) {
  const service = await startServer("service (engine off)", join(root, "build/app/main.js"), {
    ASSURE_DB: dbPath,
    ASSURE_WORKERS: "0",
    LOG_LEVEL: "error",
  });
  let prepared;
  try {
    const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "bench-engine"], { ASSURE_DB: dbPath });
    const call = makeApiClient(service.url, token);
    const { runBody, spec } = await setUp(call, agent.baseUrl, specText);
    const warmupIds = await createRuns(call, runBody, { count: WARMUP_RUNS, keyPrefix: "warmup" });
    const roundIds = [];
    for (let round = 0; round < ROUNDS; round++) {
      roundIds.push(await createRuns(call, runBody, { count: ENGINE_RUNS, keyPrefix: `round-${round}` }));
    }
    prepared = { token, spec, warmupIds, roundIds };
  } catch (error) {
    log(`--- last output of the service ---\n${service.output()}`);
    throw error;
  } finally {
    await service.stop();
  }
  const db = new Database(dbPath);
  try {
    const hold = db.prepare("UPDATE jobs SET run_at = ? WHERE job_key = ?");
    db.transaction(() => {
      prepared.roundIds.forEach((ids, round) => {
        for (const runId of ids) {
          if (hold.run(heldUntil(round), `execute_run:${runId}`).changes !== 1) throw new Error(`No queued job for run ${runId}`);
        }
      });
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return prepared;
}

/** Releases a round's held runs and waits for the service to finish them; returns its CPU time and the agent's. */
async function serviceRound({ db, service, agent, round }) {
  const before = readProc(service.pid);
  const agentBefore = readProc(agent.pid);
  db.prepare("UPDATE jobs SET run_at = ? WHERE run_at = ?").run(new Date().toISOString(), heldUntil(round));
  await waitForNoJobs(db, "SELECT COUNT(*) FROM jobs WHERE run_at < ?", [HELD_FROM], `Round ${round + 1}`);
  const after = readProc(service.pid);
  return { cpuMs: after.cpuMs - before.cpuMs, agentCpuMs: readProc(agent.pid).cpuMs - agentBefore.cpuMs, peakRssMb: after.peakRssMb };
}

/** From the first of the runs turning RUNNING to the last one ending, by the service's clock. */
function wallOf(runs) {
  const firstStart = Math.min(...runs.map((run) => Date.parse(run.started_at)));
  const lastEnd = Math.max(...runs.map((run) => Date.parse(run.ended_at)));
  return lastEnd - firstStart;
}

async function measureLevel({ concurrency, root, prepared, templatePath, client, workdirRoot, agent, model }) {
  const dir = join(workdirRoot, `c${concurrency}`);
  mkdirSync(dir);
  const dbPath = join(dir, "assure.db");
  copyFileSync(templatePath, dbPath);
  const env = { ASSURE_DB: dbPath, ASSURE_WORKERS: String(concurrency), LOG_LEVEL: "warn", ...SERVICE_EXTRA_ENV };
  const service = await startServer("service", join(root, "build/app/main.js"), env, { nodeArgs: SERVICE_NODE_ARGS });
  const db = new Database(dbPath, { timeout: 5000 });
  let baseline;
  try {
    const call = makeApiClient(service.url, prepared.token);
    await waitForNoJobs(db, "SELECT COUNT(*) FROM jobs WHERE run_at < ?", [HELD_FROM], "The warm-up runs");
    baseline = await startLineWorker("the baseline", join(root, "bench/engine-baseline.js"), {
      BENCH_BASELINE: JSON.stringify({ baseUrl: agent.baseUrl, agentPid: agent.pid, model, spec: prepared.spec, warmupRuns: WARMUP_RUNS, concurrency }),
    });

    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const measured = {};
      for (const side of round % 2 === 0 ? ["service", "baseline"] : ["baseline", "service"]) {
        if (side === "service") measured.service = await serviceRound({ db, service, agent, round });
        else measured.baseline = await baseline.request({ runs: ENGINE_RUNS });
      }
      rounds.push(measured);
    }

    const runs = await listAll(call, "/v1/runs");
    const byId = new Map(runs.map((run) => [run.run_id, run]));
    prepared.roundIds.forEach((ids, round) => {
      rounds[round].service.wallMs = wallOf(ids.map((id) => byId.get(id)).filter(Boolean));
    });
    const trace = await listAll(call, `/v1/runs/${prepared.roundIds[0][0]}/trace`);
    const callsPerRun = trace.filter((event) => event.type === "message.received").length;
    const problems = [
      ...checkRuns(runs, prepared.warmupIds, "warm-up"),
      ...prepared.roundIds.flatMap((ids, round) => checkRuns(runs, ids, `round ${round + 1}`)),
    ];
    const recorded = Array.from({ length: client.conversationsPerRun }, () => []);
    await client.runOnce({ record: recorded });
    if (normaliseIds(requestsFromTrace(trace)) !== normaliseIds(recorded)) {
      problems.push("the baseline's agent requests differ from those in the trace of a service run");
    }
    for (const { baseline: measured } of rounds) {
      if (measured.calls !== callsPerRun * ENGINE_RUNS) {
        problems.push(`the baseline made ${measured.calls} agent calls in a round, the service ${callsPerRun} per run × ${ENGINE_RUNS}`);
      }
    }
    return { concurrency, callsPerRun, rounds, peakRssMb: readProc(service.pid).peakRssMb, problems };
  } catch (error) {
    log(`--- last output of the service (concurrency ${concurrency}) ---\n${service.output()}`);
    throw error;
  } finally {
    await baseline?.stop();
    db.close();
    await service.stop();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const sum = (values) => values.reduce((total, value) => total + value, 0);

function derive(level) {
  const { concurrency, callsPerRun, rounds } = level;
  const calls = callsPerRun * ENGINE_RUNS * rounds.length;
  const ratios = rounds.map(({ service, baseline }) => baseline.wallMs / service.wallMs);
  const serviceWallMs = median(rounds.map((round) => round.service.wallMs));
  const baselineWallMs = median(rounds.map((round) => round.baseline.wallMs));
  return {
    serviceRps: ENGINE_RUNS / (serviceWallMs / 1000),
    baselineRps: ENGINE_RUNS / (baselineWallMs / 1000),
    ratio: median(ratios),
    ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    // Added wall time per agent call, as seen by one of the `concurrency` loops.
    overheadMs: ((serviceWallMs - baselineWallMs) * concurrency) / (callsPerRun * ENGINE_RUNS),
    serviceCpuPerCall: sum(rounds.map((round) => round.service.cpuMs)) / calls,
    baselineCpuPerCall: sum(rounds.map((round) => round.baseline.cpuMs)) / calls,
    // The example agent's own CPU per call, while it served the service and the baseline.
    agentCpuPerCall: {
      service: sum(rounds.map((round) => round.service.agentCpuMs)) / calls,
      baseline: sum(rounds.map((round) => round.baseline.agentCpuMs)) / calls,
    },
  };
}

export function engineTable(levels) {
  const header = [
    "Concurrency",
    "Service runs/s",
    "Baseline runs/s",
    "runs/s ratio (range)",
    "Overhead ms/call",
    "Peak RSS MB",
    "Service CPU ms/call",
    "Baseline CPU ms/call",
    "Agent CPU ms/call (service / baseline)",
    "Agent calls/run",
  ];
  const rows = levels.map((level) => {
    const d = derive(level);
    return [
      String(level.concurrency),
      fixed(d.serviceRps, 1),
      fixed(d.baselineRps, 1),
      `${fixed(d.ratio, 2)} (${fixed(d.ratioRange[0], 2)}–${fixed(d.ratioRange[1], 2)})`,
      fixed(d.overheadMs, 2),
      fixed(level.peakRssMb, 0),
      fixed(d.serviceCpuPerCall, 2),
      fixed(d.baselineCpuPerCall, 2),
      `${fixed(d.agentCpuPerCall.service, 2)} / ${fixed(d.agentCpuPerCall.baseline, 2)}`,
      String(level.callsPerRun),
    ];
  });
  return markdownTable(header, rows);
}

export function engineTargetLines(levels) {
  const lines = [];
  const clean = (level) => level.problems.length === 0;
  const atRatio = levels.find((level) => level.concurrency === ENGINE_TARGETS.ratioAtConcurrency);
  if (atRatio) {
    const { ratio } = derive(atRatio);
    lines.push(
      `${verdict(ratio >= ENGINE_TARGETS.ratio && clean(atRatio))}  Engine at concurrency ${atRatio.concurrency}: ` +
        `service runs/s = ${fixed(ratio, 2)} x baseline (target >= ${ENGINE_TARGETS.ratio})`,
    );
  }
  const single = levels.find((level) => level.concurrency === 1);
  if (single) {
    const { overheadMs } = derive(single);
    lines.push(
      `${verdict(overheadMs <= ENGINE_TARGETS.overheadMs && clean(single))}  Engine overhead per agent call at concurrency 1 = ` +
        `${fixed(overheadMs, 2)} ms (target <= ${ENGINE_TARGETS.overheadMs})`,
    );
  }
  for (const level of levels) {
    const rss = level.peakRssMb;
    lines.push(
      `${verdict(rss <= ENGINE_TARGETS.rssMb)}  Peak RSS of the service at concurrency ${level.concurrency} = ${fixed(rss, 0)} MB ` +
        `(target <= ${ENGINE_TARGETS.rssMb})`,
    );
  }
  for (const level of levels) {
    for (const problem of level.problems) lines.push(`WARNING concurrency ${level.concurrency}: ${problem}`);
  }
  return lines;
}

export function describeEngineBench() {
  return (
    `Run engine: ${ROUNDS} rounds of ${ENGINE_RUNS} runs of examples/refund-agent-deterministic.yaml (repeat 1) per concurrency ` +
    `(${ENGINE_CONCURRENCY.join(", ")}), service and baseline alternating, each after ${WARMUP_RUNS} warm-up runs; ` +
    "example agent in its own process; medians over the rounds"
  );
}

/** Runs the engine bench and prints its table and target lines to stdout. */
export async function runEngineBench({ root }) {
  if (!isCount(ENGINE_RUNS, 10_000)) throw new Error("BENCH_ENGINE_RUNS must be a whole number from 1 to 10000");
  if (!isCount(ROUNDS, 99)) throw new Error("BENCH_ENGINE_ROUNDS must be a whole number from 1 to 99");
  if (!ENGINE_CONCURRENCY.every((c) => isCount(c, 256))) throw new Error("BENCH_ENGINE_CONCURRENCY must list whole numbers from 1 to 256, e.g. 1,4,16");
  const specText = loadSpec(join(root, "examples/refund-agent-deterministic.yaml"));
  const workdirRoot = mkdtempSync(join(tmpdir(), "assure-bench-engine-"));
  let agent;
  try {
    log("Starting the example agent…");
    agent = await startExampleAgent(join(root, "build/examples/agent/main.js"));
    log(`Engine: creating ${WARMUP_RUNS} + ${ROUNDS} × ${ENGINE_RUNS} queued runs with the engine off…`);
    const templatePath = join(workdirRoot, "template.db");
    const prepared = await prepareDatabase({ root, agent, specText, dbPath: templatePath });
    const client = makeConversationClient({ baseUrl: agent.baseUrl, model: MODEL, spec: prepared.spec });
    const levels = [];
    for (const concurrency of ENGINE_CONCURRENCY) {
      log(`Engine: concurrency ${concurrency}: warm-up, then ${ROUNDS} rounds of ${ENGINE_RUNS} runs (service and baseline)…`);
      const level = await measureLevel({ concurrency, root, prepared, templatePath, client, workdirRoot, agent, model: MODEL });
      const { serviceRps, baselineRps } = derive(level);
      log(`  service ${fixed(serviceRps, 0)} runs/s, baseline ${fixed(baselineRps, 0)} runs/s (medians)`);
      levels.push(level);
    }
    console.log(`\nRun engine, ${ROUNDS} rounds of ${ENGINE_RUNS} runs per concurrency (medians over the rounds):\n`);
    console.log(engineTable(levels));
    console.log("");
    for (const line of engineTargetLines(levels)) console.log(line);
    return levels;
  } catch (error) {
    if (agent) log(`--- last output of the example agent ---\n${agent.output()}`);
    throw error;
  } finally {
    await agent?.stop();
    rmSync(workdirRoot, { recursive: true, force: true });
  }
}
