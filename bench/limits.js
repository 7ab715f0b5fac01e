// The load run: the service at saturation (autocannon, 10 connections) on an idempotent run
// creation replay and on evidence reads, with its limiter on at limits that never trigger against
// the same service with it off — the cost of counting every request.
//
// This machine's speed changes by up to 2x within a minute (other tenants), and two processes of
// one build differ by a few per cent whatever their settings (the A/A control, BENCH_LOAD_AA=1,
// shows both). So the two services are started as several pairs, in turns on-first and off-first,
// each pair on fresh databases with the same fixture; each pair is measured in rounds of two short
// slices back to back (bench/lib/load.js measurePair), and the verdict is the median over every
// round of on's throughput over off's. Where taskset is there, the services share one core and the
// load generator has the others, so neither waits for the other's turn.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import {
  LOCAL_SETTINGS,
  REPLAY_IDEMPOTENCY_KEY,
  createFixture,
  makeApiClient,
  replayBody,
  startAgentStub,
} from "./lib/fixture.js";
import { measurePair, mergeSlices } from "./lib/load.js";
import { pinToCpus, runCli, startServer } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";
import { median, percentile } from "./lib/statistics.js";

const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
const PAIRS = Number(process.env.BENCH_LOAD_PAIRS ?? 4);
const ROUNDS = 10;
const TIMING = { warmupSeconds: 2, sliceSeconds: LOAD_SECONDS / (PAIRS * ROUNDS), rounds: ROUNDS };
const TARGET = 0.9; // limiter on: at least this share of the throughput with it off
/** Limits that never trigger: every request is counted, none refused. */
const LIMITS_NEVER_REACHED = {
  ASSURE_EGRESS_ALLOWLIST: LOCAL_SETTINGS.ASSURE_EGRESS_ALLOWLIST,
  ASSURE_RATE_LIMIT_PER_MINUTE: "1000000000",
  ASSURE_UNAUTHENTICATED_PER_MINUTE: "1000000000",
  ASSURE_PUBLIC_PER_MINUTE: "1000000000",
  ASSURE_GITHUB_WEBHOOKS_PER_MINUTE: "1000000000",
  ASSURE_RUN_CREATES_PER_MINUTE: "1000000000",
  ASSURE_MAX_QUEUED_RUNS: "1000000000",
};
const CASES = [
  ["replay", "POST /v1/runs (idempotent replay)"],
  ["evidence", "GET /v1/runs/{id}/evidence"],
];

const perSecond = (slice) => slice.latenciesMs.length / slice.seconds;
const cpuPerRequest = (slice) => slice.cpuMs / slice.latenciesMs.length;
const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "—");

export function describeLimitsBench() {
  return (
    `Load: autocannon at saturation (10 connections), ${LOAD_SECONDS} s measured per service and case over ${PAIRS} process pairs ` +
    `(started on-first and off-first in turns), in rounds of two back-to-back slices (the verdict: the median of the rounds' ratios); the service with its limiter on (limits never reached) against it off`
  );
}

/** The cores the services share and the ones the load generator keeps; none on a single core. */
function coreSplit() {
  const count = cpus().length;
  return count >= 2
    ? { services: String(count - 1), generator: count > 2 ? `0-${count - 2}` : "0", all: `0-${count - 1}` }
    : undefined;
}

async function startWithFixture(root, workdir, name, limits, agentBaseUrl, cores) {
  const dbPath = join(workdir, `${name}.db`);
  const service = await startServer(name, join(root, "build/app/main.js"), {
    ...limits,
    ASSURE_DB: dbPath,
    ASSURE_WORKERS: "0",
    LOG_LEVEL: "warn",
  });
  const pinned = cores !== undefined && pinToCpus(service.pid, cores.services);
  const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", name], {
    ASSURE_DB: dbPath,
  });
  const fixture = await createFixture(makeApiClient(service.url, token), {
    agentBaseUrl,
    specPath: join(root, "examples/refund-agent.yaml"),
  });
  return { service, token, fixture, pinned };
}

// The same request to each service, with that service's own key and fixture.
function caseOf(key, { token, fixture }) {
  return key === "replay"
    ? {
        method: "POST",
        path: "/v1/runs",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "idempotency-key": REPLAY_IDEMPOTENCY_KEY,
        },
        body: JSON.stringify(replayBody(fixture)),
        expectStatus: 200,
      }
    : {
        method: "GET",
        path: `/v1/runs/${fixture.runId}/evidence`,
        headers: { authorization: `Bearer ${token}` },
        body: undefined,
        expectStatus: 200,
      };
}

/** One pair of fresh services, started in `order`: each case measured on both; their peak RSS. */
async function measureOnePair(root, workdir, agentBaseUrl, { pair, order }, cores) {
  const limitsOf = { on: process.env.BENCH_LOAD_AA ? LOCAL_SETTINGS : LIMITS_NEVER_REACHED, off: LOCAL_SETTINGS };
  const started = {};
  try {
    for (const side of order) {
      started[side] = await startWithFixture(
        root,
        workdir,
        `pair-${pair}-limiter-${side}`,
        limitsOf[side],
        agentBaseUrl,
        cores,
      );
    }
    const byCase = {};
    for (const [key] of CASES) {
      // measurePair sends one case to two targets: here each target gets its own case (its own key and ids).
      byCase[key] = await measurePair(
        { perTarget: { service: caseOf(key, started.on), baseline: caseOf(key, started.off) } },
        { service: started.on.service.url, baseline: started.off.service.url },
        TIMING,
        { pids: { service: started.on.service.pid, baseline: started.off.service.pid } },
      );
    }
    return {
      byCase,
      pinned: started.on.pinned && started.off.pinned,
      peakRssMb: { on: readProc(started.on.service.pid).peakRssMb, off: readProc(started.off.service.pid).peakRssMb },
    };
  } finally {
    for (const side of order) await started[side]?.service.stop();
  }
}

export async function runLimitsBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-load-"));
  const cores = coreSplit();
  const agent = await startAgentStub();
  const generatorPinned = cores !== undefined && pinToCpus(process.pid, cores.generator);
  try {
    const pairs = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? ["on", "off"] : ["off", "on"];
      log(`Load: pair ${pair + 1} of ${PAIRS} (limiter ${order[0]} started first)…`);
      pairs.push(await measureOnePair(root, workdir, agent.baseUrl, { pair, order }, cores));
    }
    report(pairs, generatorPinned && pairs.every((pair) => pair.pinned));
  } finally {
    if (generatorPinned) pinToCpus(process.pid, cores.all);
    await agent.stop();
    rmSync(workdir, { recursive: true, force: true });
  }
}

function report(pairs, pinned) {
  const rows = [];
  const verdicts = [];
  for (const [key, name] of CASES) {
    const pooled = {
      on: mergeSlices(pairs.flatMap((pair) => pair.byCase[key].service.slices)),
      off: mergeSlices(pairs.flatMap((pair) => pair.byCase[key].baseline.slices)),
    };
    for (const [label, measured] of [
      ["limiter on", pooled.on],
      ["limiter off", pooled.off],
    ]) {
      rows.push([
        name,
        label,
        fixed(measured.requestsPerSecond, 0),
        fixed(measured.p50Ms, 2),
        fixed(measured.p99Ms, 2),
        fixed(measured.cpuUsPerRequest, 1),
        String(measured.errors + measured.unexpectedStatus),
      ]);
    }
    // Each round: on and off back to back, so the machine's speed is nearly the same for both.
    const rounds = pairs.flatMap((pair) => pair.byCase[key].rounds);
    const ratios = rounds
      .map(({ service, baseline }) => perSecond(service) / perSecond(baseline))
      .sort((a, b) => a - b);
    const cpuRatios = rounds.map(({ service, baseline }) => cpuPerRequest(service) / cpuPerRequest(baseline));
    const ratio = median(ratios);
    verdicts.push(
      `${ratio >= TARGET ? "PASS" : "FAIL"}  ${name}: limiter on ${fixed(ratio, 2)} x off (target >= ${TARGET}; median of ${ratios.length} rounds, ` +
        `middle half ${fixed(percentile(ratios, 0.25), 2)}–${fixed(percentile(ratios, 0.75), 2)}, pooled ${fixed(pooled.on.requestsPerSecond / pooled.off.requestsPerSecond, 2)}); ` +
        `CPU per request ${fixed(median(cpuRatios), 2)} x`,
    );
  }
  console.log(
    `\nLoad, limiter on (limits never reached) and off, ${PAIRS} process pairs pooled${pinned ? ", services on one core and the load generator on the others" : ""}:\n`,
  );
  console.log(
    markdownTable(["Case", "Service", "Requests/s", "p50 (ms)", "p99 (ms)", "CPU µs/request", "Errors"], rows),
  );
  console.log("");
  for (const line of verdicts) console.log(line);
  const peak = (side) => fixed(Math.max(...pairs.map((pair) => pair.peakRssMb[side])), 0);
  console.log(`INFO  peak RSS: limiter on ${peak("on")} MB, off ${peak("off")} MB`);
}
