// `npm run bench`: measures the built service (build/app/main.js) against a bare node:http +
// better-sqlite3 baseline doing the same SQL, on 127.0.0.1, then its run engine against a bare
// client loop making the same agent calls (bench/engine.js), and prints tables with PASS/FAIL
// per target. It reports; it does not gate: the exit code is 0 whatever the numbers.
// `node bench/run.js api`, `… engine`, `… traces` (or another part's name) runs one part only. See docs/benchmarks.md.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  LOCAL_SETTINGS,
  REPLAY_IDEMPOTENCY_KEY,
  createFixture,
  makeApiClient,
  replayBody,
  startAgentStub,
} from "./lib/fixture.js";
import { describeEngineBench, runEngineBench } from "./engine.js";
import { describeGitHubBench, runGitHubBench } from "./github.js";
import { describePagesBench, runPagesBench } from "./pages.js";
import { describeWebhookBench, runWebhookBench } from "./webhooks.js";
import { describeHostileBench, runHostileBench } from "./hostile.js";
import { describeLimitsBench, runLimitsBench } from "./limits.js";
import { describeTracesBench, runTracesBench } from "./traces.js";
import { describeCliBench, runCliBench } from "./cli.js";
import { describePostgresBench, runPostgresBench } from "./postgres.js";
import { describeNodesBench, runNodesBench } from "./nodes.js";
import { describeRedTeamBench, runRedTeamBench } from "./red-team.js";
import { CONNECTIONS, measurePair } from "./lib/load.js";
import { NODE_ARGS, runCli, startServer } from "./lib/processes.js";
import { problemLines, resultsTable, targetLines } from "./lib/report.js";
import { seedRuns } from "./lib/seed-runs.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SERVICE_MAIN = join(ROOT, "build/app/main.js");
const SERVICE_CLI = join(ROOT, "build/app/cli.js");
const BASELINE_MAIN = join(ROOT, "bench/baseline-server.js");
const EXAMPLE_AGENT_MAIN = join(ROOT, "build/examples/agent/main.js");
const SPEC_FILE = join(ROOT, "examples/refund-agent.yaml");

const SEEDED_RUNS = Number(process.env.BENCH_RUNS ?? 100_000);
const DEEP_POSITION = Math.floor(SEEDED_RUNS * 0.9);
const WALK_PAGE_SIZE = 200;
const TIMING = {
  warmupSeconds: 2,
  sliceSeconds: Number(process.env.BENCH_SLICE_SECONDS ?? 3),
  rounds: 4, // each round measures both targets once, in alternating order: S B B S S B B S
};
/** A hard stop, in case something hangs: the bench normally takes about 3 minutes. */
const OVERALL_TIMEOUT_MS = 30 * 60_000;
const PARTS = [
  "api",
  "engine",
  "github",
  "pages",
  "webhooks",
  "load",
  "hostile",
  "traces",
  "cli",
  "postgres",
  "nodes",
  "red-team",
];

const FIRST_PAGE = "GET /v1/runs?limit=50 (first page)";
const DEEP_PAGE = `GET /v1/runs?limit=50 (after ${DEEP_POSITION.toLocaleString("en")} runs)`;

const log = (message) => process.stderr.write(`${message}\n`);

function describeMachine(parts) {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return [
    `Node ${process.version} on ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpu.trim()}); ` +
      `every Node process runs with ${NODE_ARGS.join(" ") || "no arguments"} (package.json config.node_args, as npm start)`,
    ...(parts.includes("api") ? [describeApiLoad()] : []),
    ...(parts.includes("engine") ? [describeEngineBench()] : []),
    ...(parts.includes("github") ? [describeGitHubBench()] : []),
    ...(parts.includes("pages") ? [describePagesBench()] : []),
    ...(parts.includes("webhooks") ? [describeWebhookBench()] : []),
    ...(parts.includes("load") ? [describeLimitsBench()] : []),
    ...(parts.includes("hostile") ? [describeHostileBench()] : []),
    ...(parts.includes("traces") ? [describeTracesBench()] : []),
    ...(parts.includes("cli") ? [describeCliBench()] : []),
    ...(parts.includes("postgres") ? [describePostgresBench()] : []),
    ...(parts.includes("nodes") ? [describeNodesBench()] : []),
    ...(parts.includes("red-team") ? [describeRedTeamBench()] : []),
  ].join("\n");
}

function describeApiLoad() {
  return (
    `API: autocannon: ${CONNECTIONS} connections, pipelining 1; per case ${TIMING.warmupSeconds} s warm-up per target, ` +
    `then ${TIMING.rounds * TIMING.sliceSeconds} s measured per target in ${TIMING.sliceSeconds} s slices, alternating with the other target`
  );
}

/** Walks the run list in large pages and returns the cursor that starts after `position` runs. */
async function findDeepCursor(call, position) {
  const pages = Math.ceil(position / WALK_PAGE_SIZE);
  let cursor;
  for (let page = 0; page < pages; page++) {
    const query = cursor ? `limit=${WALK_PAGE_SIZE}&cursor=${cursor}` : `limit=${WALK_PAGE_SIZE}`;
    const { json } = await call("GET", `/v1/runs?${query}`);
    if (!json.next_cursor) throw new Error(`The run list ended after page ${page + 1}; expected ${pages} full pages`);
    cursor = json.next_cursor;
  }
  return cursor;
}

function defineCases(fixture, token, deepCursor) {
  const auth = { authorization: `Bearer ${token}` };
  const get = (name, path) => ({ name, method: "GET", path, headers: auth, body: undefined, expectStatus: 200 });
  return [
    {
      name: "POST /v1/runs (idempotent replay)",
      method: "POST",
      path: "/v1/runs",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": REPLAY_IDEMPOTENCY_KEY },
      body: JSON.stringify(replayBody(fixture)),
      expectStatus: 200,
    },
    get("GET /v1/runs/{id}", `/v1/runs/${fixture.runId}`),
    get("GET /v1/runs/{id}/evidence", `/v1/runs/${fixture.runId}/evidence`),
    get(FIRST_PAGE, "/v1/runs?limit=50"),
    get(DEEP_PAGE, `/v1/runs?limit=50&cursor=${deepCursor}`),
  ];
}

async function fetchOnce(baseUrl, benchCase) {
  const response = await fetch(`${baseUrl}${benchCase.path}`, {
    method: benchCase.method,
    headers: benchCase.headers,
    body: benchCase.body,
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: response.status,
    replayed: response.headers.get("idempotent-replayed"),
    text: await response.text(),
  };
}

/**
 * The comparison only means something if both servers answer alike: same status, same body
 * byte for byte, and the replay header on the POST.
 */
async function checkSameAnswers(cases, targets) {
  const differences = [];
  for (const benchCase of cases) {
    const service = await fetchOnce(targets.service, benchCase);
    const baseline = await fetchOnce(targets.baseline, benchCase);
    if (service.status !== benchCase.expectStatus) {
      differences.push(`${benchCase.name}: service answered ${service.status}: ${service.text.slice(0, 300)}`);
    } else if (service.status !== baseline.status || service.text !== baseline.text) {
      differences.push(`${benchCase.name}: baseline answered ${baseline.status} with another body`);
    }
    if (benchCase.method === "POST" && service.replayed !== "true") {
      differences.push(`${benchCase.name}: service did not send Idempotent-Replayed: true`);
    }
  }
  return differences;
}

/** `node bench/run.js [api|engine|github]`: every part by default. */
function selectedParts() {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((part) => !PARTS.includes(part));
  if (unknown.length > 0) {
    throw new Error(`Unknown part ${unknown.join(", ")}: use ${PARTS.join(" or ")} (or nothing for all)`);
  }
  return asked.length > 0 ? asked : PARTS;
}

async function main() {
  setTimeout(() => {
    log(`The bench did not finish within ${OVERALL_TIMEOUT_MS / 60_000} minutes; giving up.`);
    process.exit(1);
  }, OVERALL_TIMEOUT_MS).unref();
  const parts = selectedParts();
  for (const script of [SERVICE_MAIN, SERVICE_CLI, EXAMPLE_AGENT_MAIN]) {
    if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run bench\` (it builds first).`);
  }

  console.log(describeMachine(parts));
  if (parts.includes("api")) await runApiBench();
  if (parts.includes("engine")) {
    if (parts.includes("api")) console.log("");
    await runEngineBench({ root: ROOT });
  }
  if (parts.includes("github")) {
    console.log("");
    await runGitHubBench({ root: ROOT });
  }
  if (parts.includes("pages")) {
    console.log("");
    await runPagesBench({ root: ROOT });
  }
  if (parts.includes("webhooks")) {
    console.log("");
    await runWebhookBench({ root: ROOT });
  }
  if (parts.includes("load")) {
    console.log("");
    await runLimitsBench({ root: ROOT });
  }
  if (parts.includes("hostile")) {
    console.log("");
    await runHostileBench({ root: ROOT });
  }
  if (parts.includes("traces")) {
    console.log("");
    await runTracesBench({ root: ROOT });
  }
  if (parts.includes("cli")) {
    console.log("");
    await runCliBench({ root: ROOT });
  }
  if (parts.includes("postgres")) {
    console.log("");
    await runPostgresBench({ root: ROOT });
  }
  if (parts.includes("nodes")) {
    console.log("");
    await runNodesBench({ root: ROOT });
  }
  if (parts.includes("red-team")) {
    console.log("");
    await runRedTeamBench({ root: ROOT });
  }
}

async function runApiBench() {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-"));
  const dbPath = join(workdir, "assure.db");
  const cleanups = [() => rmSync(workdir, { recursive: true, force: true })];
  const servers = [];
  try {
    const agent = await startAgentStub();
    cleanups.push(agent.stop);
    log("Starting the service…");
    const service = await startServer("service", SERVICE_MAIN, {
      ...LOCAL_SETTINGS,
      ASSURE_DB: dbPath,
      LOG_LEVEL: "warn",
    });
    cleanups.push(service.stop);
    servers.push(service);

    const { token } = runCli(SERVICE_CLI, ["keys", "create", "--admin", "--name", "bench"], { ASSURE_DB: dbPath });
    const call = makeApiClient(service.url, token);
    const fixture = await createFixture(call, { agentBaseUrl: agent.baseUrl, specPath: SPEC_FILE });

    log(`Inserting ${SEEDED_RUNS.toLocaleString("en")} runs…`);
    const seedMs = seedRuns(dbPath, fixture, { count: SEEDED_RUNS, endMs: Date.parse(fixture.runCreatedAt) - 1000 });
    log(`  done in ${(seedMs / 1000).toFixed(1)} s`);

    log(`Paging ${DEEP_POSITION.toLocaleString("en")} runs deep (limit ${WALK_PAGE_SIZE})…`);
    const walkStarted = performance.now();
    const deepCursor = await findDeepCursor(call, DEEP_POSITION);
    log(`  done in ${((performance.now() - walkStarted) / 1000).toFixed(1)} s`);

    log("Starting the baseline…");
    const baseline = await startServer("baseline", BASELINE_MAIN, { ASSURE_DB: dbPath });
    cleanups.push(baseline.stop);
    servers.push(baseline);
    const targets = { service: service.url, baseline: baseline.url };

    const cases = defineCases(fixture, token, deepCursor);
    const differences = await checkSameAnswers(cases, targets);
    if (differences.length > 0) throw new Error(`The two servers do not answer alike:\n  ${differences.join("\n  ")}`);

    const results = [];
    for (const benchCase of cases) {
      log(`Measuring ${benchCase.name}…`);
      results.push({ name: benchCase.name, ...(await measurePair(benchCase, targets, TIMING)) });
    }

    console.log(`\nRuns in the database: ${(SEEDED_RUNS + 1).toLocaleString("en")}\n`);
    console.log(resultsTable(results));
    console.log("");
    for (const line of [
      ...targetLines(results, { firstPage: FIRST_PAGE, deepPage: DEEP_PAGE }),
      ...problemLines(results),
    ]) {
      console.log(line);
    }
  } catch (error) {
    for (const server of servers) log(`--- last output of the ${server.name} ---\n${server.output()}`);
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
