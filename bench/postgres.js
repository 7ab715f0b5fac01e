// The PostgreSQL part of `npm run bench` (also alone: `node bench/run.js postgres`).
// One service node on PostgreSQL beside one on SQLite, both running at once, measured side by side:
// API reads and the idempotent replay of a run creation under autocannon (bench/lib/load.js, in
// alternating slices), then the run engine holding a 2,000-case run at concurrency 16 against a
// 200 ms agent (alternating rounds, medians). See docs/benchmarks.md, "PostgreSQL".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchSpec } from "./engine.js";
import { LOCAL_SETTINGS, createBenchProject, makeApiClient, runToEnd } from "./lib/fixture.js";
import { CONNECTIONS, measurePair } from "./lib/load.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { createScratchDatabase, newEncryptionKey, postgresSettings, postgresUnreachable } from "./lib/postgres.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

const ENGINE_CASES = Number(process.env.BENCH_POSTGRES_ENGINE_CASES ?? 2000);
const ENGINE_CONCURRENCY = 16;
const LATENCY_MS = Number(process.env.BENCH_POSTGRES_LATENCY_MS ?? 200);
const ENGINE_ROUNDS = Number(process.env.BENCH_POSTGRES_ROUNDS ?? 3);
/** Conversations (and evaluations) of the run the reads read. */
const READ_RUN_CASES = 50;
/** Runs in the list besides it: more than a page of 50. */
const LISTED_RUNS = 60;
const TIMING = {
  warmupSeconds: 2,
  sliceSeconds: Number(process.env.BENCH_SLICE_SECONDS ?? 3),
  rounds: 4, // P S S P P S S P
};
const REPLAY_KEY = "bench-postgres-replay";
/** Diagnostics, not for the figures: node arguments for both measured nodes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
const SERVICE_NODE_ARGS = (process.env.BENCH_POSTGRES_NODE_ARGS ?? "").split(" ").filter(Boolean);

export const POSTGRES_TARGETS = { apiRatio: 0.7, engineRatio: 0.95 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;

/** One node on `database` settings: ASSURE_WORKERS=1 as the engine part, so one run is what is measured. */
async function startNode(root, name, databaseSettings) {
  const env = {
    ...LOCAL_SETTINGS,
    ...databaseSettings,
    ASSURE_WORKERS: "1",
    ASSURE_MAX_CONVERSATIONS: "64",
    LOG_LEVEL: "warn",
  };
  const service = await startServer(name, join(root, "build/app/main.js"), env, { nodeArgs: SERVICE_NODE_ARGS });
  const { token } = runCli(
    join(root, "build/app/cli.js"),
    ["keys", "create", "--admin", "--name", "bench-postgres"],
    env,
  );
  return { service, call: makeApiClient(service.url, token), token };
}

/**
 * What the reads read, made the same way on both nodes through the API: a project, a run of
 * READ_RUN_CASES conversations held to its end (created with the replay's Idempotency-Key), and
 * LISTED_RUNS one-case runs beside it. Returns the requests of each case for this node.
 */
async function prepareNode(node, agents) {
  const { call, token } = node;
  const project = await createBenchProject(call, "bench-postgres", {
    fast: agents.fast.baseUrl,
    slow: agents.slow.baseUrl,
  });
  const addSpec = async (cases, concurrency) =>
    (
      await call("POST", "/v1/test-specs", {
        body: { project_id: project.project, spec: benchSpec(cases, concurrency) },
      })
    ).json.test_spec_id;
  const readSpec = await addSpec(READ_RUN_CASES, 16);
  const replayBody = { test_spec_id: readSpec, environment_id: project.environments.fast };
  const readRun = await runToEnd(call, replayBody, REPLAY_KEY);
  if (readRun.status !== "COMPLETED") throw new Error(`The run the reads read ended ${readRun.status}`);
  const oneCase = await addSpec(1, 1);
  const listed = [];
  for (let i = 0; i < LISTED_RUNS; i++) {
    const { json } = await call("POST", "/v1/runs", {
      body: { test_spec_id: oneCase, environment_id: project.environments.fast },
      headers: { "idempotency-key": `bench-postgres-listed-${i}` },
    });
    listed.push(json.run_id);
  }
  // Nothing runs while the reads are measured.
  for (const runId of listed) await waitForEnd(call, runId);

  const auth = { authorization: `Bearer ${token}` };
  const get = (path) => ({ method: "GET", path, headers: auth, body: undefined, expectStatus: 200 });
  const runPath = `/v1/runs/${readRun.run_id}`;
  return {
    project,
    engineSpec: await addSpec(ENGINE_CASES, ENGINE_CONCURRENCY),
    cases: {
      replay: {
        method: "POST",
        path: "/v1/runs",
        headers: { ...auth, "content-type": "application/json", "idempotency-key": REPLAY_KEY },
        body: JSON.stringify(replayBody),
        expectStatus: 200,
      },
      run: get(runPath),
      evidence: get(`${runPath}/evidence`),
      conversations: get(`${runPath}/conversations?limit=50`),
      evaluations: get(`${runPath}/evaluations?limit=50`),
      list: get("/v1/runs?limit=50"),
    },
  };
}

async function waitForEnd(call, runId) {
  for (;;) {
    const { json } = await call("GET", `/v1/runs/${runId}`);
    if (["COMPLETED", "INCONCLUSIVE", "FAILED"].includes(json.status)) return json;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const READ_CASES = [
  { key: "replay", name: "POST /v1/runs (idempotent replay)" },
  { key: "run", name: "GET /v1/runs/{id}" },
  { key: "evidence", name: "GET /v1/runs/{id}/evidence" },
  { key: "conversations", name: "GET /v1/runs/{id}/conversations?limit=50" },
  { key: "evaluations", name: "GET /v1/runs/{id}/evaluations?limit=50" },
  { key: "list", name: "GET /v1/runs?limit=50" },
];

/** Each case answers as it should on both nodes before it is measured. */
async function checkAnswers(nodes, prepared) {
  const problems = [];
  for (const { key, name } of READ_CASES) {
    for (const side of ["postgres", "sqlite"]) {
      const request = prepared[side].cases[key];
      const response = await fetch(`${nodes[side].service.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      if (response.status !== request.expectStatus) {
        problems.push(`${name} on ${side}: ${response.status} ${text.slice(0, 300)}`);
      } else if (request.method === "POST" && response.headers.get("idempotent-replayed") !== "true") {
        problems.push(`${name} on ${side}: no Idempotent-Replayed: true`);
      } else if (key === "list" && JSON.parse(text).data.length !== 50) {
        problems.push(`${name} on ${side}: ${JSON.parse(text).data.length} runs, expected 50`);
      }
    }
  }
  return problems;
}

async function measureReads(nodes, prepared) {
  const targets = { service: nodes.postgres.service.url, baseline: nodes.sqlite.service.url };
  const pids = { service: nodes.postgres.service.pid, baseline: nodes.sqlite.service.pid };
  const results = [];
  for (const { key, name } of READ_CASES) {
    log(`PostgreSQL: measuring ${name}…`);
    const benchCase = {
      name,
      perTarget: { service: prepared.postgres.cases[key], baseline: prepared.sqlite.cases[key] },
    };
    const { service, baseline } = await measurePair(benchCase, targets, TIMING, { pids });
    results.push({ name, postgres: service, sqlite: baseline });
  }
  return results;
}

/** The engine on each node in turn, alternating which goes first: wall time from RUNNING to the end. */
async function measureEngine(nodes, prepared) {
  const problems = [];
  const body = (side, environment) => ({
    test_spec_id: prepared[side].engineSpec,
    environment_id: prepared[side].project.environments[environment],
  });
  const check = (run, what) => {
    if (run.status !== "COMPLETED" || run.verdict !== "PASS") {
      problems.push(`${what} ended ${run.status}/${run.verdict}`);
    }
  };
  for (const side of ["postgres", "sqlite"]) {
    check(await runToEnd(nodes[side].call, body(side, "fast"), "engine-warm-up"), `the warm-up run on ${side}`);
  }
  const rounds = [];
  for (let round = 0; round < ENGINE_ROUNDS; round++) {
    const result = {};
    for (const side of round % 2 === 0 ? ["postgres", "sqlite"] : ["sqlite", "postgres"]) {
      log(`PostgreSQL: engine round ${round + 1} on ${side}…`);
      const run = await runToEnd(nodes[side].call, body(side, "slow"), `engine-round-${round}`);
      check(run, `round ${round + 1} on ${side}`);
      result[side] = Date.parse(run.ended_at) - Date.parse(run.started_at);
    }
    rounds.push(result);
  }
  const ratios = rounds.map((round) => round.sqlite / round.postgres);
  return {
    postgresMs: median(rounds.map((round) => round.postgres)),
    sqliteMs: median(rounds.map((round) => round.sqlite)),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
    problems,
  };
}

const isClean = (m) => m.unexpectedStatus === 0 && m.errors === 0;

function printResults(reads, engine) {
  const header = [
    "Case",
    "PostgreSQL req/s",
    "SQLite req/s",
    "req/s ratio",
    "PostgreSQL p99 ms",
    "SQLite p99 ms",
    "PostgreSQL CPU µs/req",
    "SQLite CPU µs/req",
  ];
  const rows = reads.map(({ name, postgres, sqlite }) => [
    name,
    fixed(postgres.requestsPerSecond, 0),
    fixed(sqlite.requestsPerSecond, 0),
    fixed(postgres.requestsPerSecond / sqlite.requestsPerSecond, 2),
    fixed(postgres.p99Ms, 2),
    fixed(sqlite.p99Ms, 2),
    fixed(postgres.cpuUsPerRequest, 0),
    fixed(sqlite.cpuUsPerRequest, 0),
  ]);
  console.log(`\nOne node on PostgreSQL against one on SQLite, API (${CONNECTIONS} connections):\n`);
  console.log(markdownTable(header, rows));
  console.log(
    `\nRun engine, ${ENGINE_CASES} cases at concurrency ${ENGINE_CONCURRENCY}, agent latency ${LATENCY_MS} ms (medians of ${ENGINE_ROUNDS} rounds):\n`,
  );
  console.log(
    markdownTable(
      ["PostgreSQL s", "SQLite s", "Ratio (range)"],
      [
        [
          fixed(engine.postgresMs / 1000, 2),
          fixed(engine.sqliteMs / 1000, 2),
          `${fixed(engine.ratio, 2)} (${fixed(engine.range[0], 2)}–${fixed(engine.range[1], 2)})`,
        ],
      ],
    ),
  );
  console.log("");
  for (const { name, postgres, sqlite } of reads) {
    const ratio = postgres.requestsPerSecond / sqlite.requestsPerSecond;
    console.log(
      `${verdict(ratio >= POSTGRES_TARGETS.apiRatio && isClean(postgres) && isClean(sqlite))}  ${name}: PostgreSQL req/s = ${fixed(ratio, 2)} x SQLite (target >= ${POSTGRES_TARGETS.apiRatio})`,
    );
  }
  console.log(
    `${verdict(engine.ratio >= POSTGRES_TARGETS.engineRatio && engine.problems.length === 0)}  Engine throughput on PostgreSQL, concurrency ${ENGINE_CONCURRENCY}, agent latency ${LATENCY_MS} ms, ` +
      `${ENGINE_CASES} cases: ${fixed(engine.ratio, 2)} x SQLite (target >= ${POSTGRES_TARGETS.engineRatio})`,
  );
  for (const { name, postgres, sqlite } of reads) {
    for (const [side, m] of [
      ["PostgreSQL", postgres],
      ["SQLite", sqlite],
    ]) {
      if (!isClean(m)) {
        console.log(
          `WARNING ${name} (${side}): ${m.unexpectedStatus} unexpected statuses, ${m.errors} errors/timeouts`,
        );
      }
    }
  }
  for (const problem of engine.problems) console.log(`WARNING engine: ${problem}`);
}

export function describePostgresBench() {
  return (
    `PostgreSQL: one node on PostgreSQL (a scratch database) beside one on SQLite, both up at once (ASSURE_WORKERS=1): ` +
    `the API by autocannon, ${TIMING.rounds} slices of ${TIMING.sliceSeconds} s per node alternating; one run of ${ENGINE_CASES} cases ` +
    `at concurrency ${ENGINE_CONCURRENCY} against the example agent answering after ${LATENCY_MS} ms, ${ENGINE_ROUNDS} rounds alternating, medians`
  );
}

/** Runs the PostgreSQL bench and prints its tables and target lines; says so and returns if PostgreSQL does not answer. */
export async function runPostgresBench({ root }) {
  if (!isCount(ENGINE_CASES, 10_000)) {
    throw new Error("BENCH_POSTGRES_ENGINE_CASES must be a whole number from 1 to 10000");
  }
  if (!isCount(ENGINE_ROUNDS, 99)) throw new Error("BENCH_POSTGRES_ROUNDS must be a whole number from 1 to 99");
  const unreachable = await postgresUnreachable();
  if (unreachable) {
    console.log(`PostgreSQL: skipped, the server does not answer (${unreachable}); set BENCH_DATABASE_URL`);
    return undefined;
  }
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-postgres-"));
  const cleanups = [() => rmSync(workdir, { recursive: true, force: true })];
  const nodes = {};
  try {
    const database = await createScratchDatabase();
    cleanups.push(database.drop);
    const agents = {};
    for (const [name, latencyMs] of [
      ["fast", 0],
      ["slow", LATENCY_MS],
    ]) {
      agents[name] = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs });
      cleanups.push(agents[name].stop);
    }
    log("PostgreSQL: starting a node on PostgreSQL and one on SQLite…");
    nodes.postgres = await startNode(root, "service on PostgreSQL", postgresSettings(database, newEncryptionKey()));
    cleanups.push(nodes.postgres.service.stop);
    nodes.sqlite = await startNode(root, "service on SQLite", { ASSURE_DB: join(workdir, "assure.db") });
    cleanups.push(nodes.sqlite.service.stop);

    log("PostgreSQL: preparing what the reads read on both…");
    const prepared = {
      postgres: await prepareNode(nodes.postgres, agents),
      sqlite: await prepareNode(nodes.sqlite, agents),
    };
    const problems = await checkAnswers(nodes, prepared);
    if (problems.length > 0) throw new Error(`The nodes do not answer as they should:\n  ${problems.join("\n  ")}`);

    const reads = await measureReads(nodes, prepared);
    const engine = await measureEngine(nodes, prepared);
    printResults(reads, engine);
    return { reads, engine };
  } catch (error) {
    for (const node of Object.values(nodes)) {
      log(`--- last output of the ${node.service.name} ---\n${node.service.output()}`);
    }
    throw error;
  } finally {
    // Nodes first (cleanups run in reverse), then the database they were connected to.
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
