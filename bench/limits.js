// The load run: the service at saturation (autocannon, 10 connections) on an idempotent run
// creation replay and on evidence reads, with its limiter on at limits that never trigger against
// the same service with it off — the cost of counting every request. Two services, each on its own
// database with the same fixture, measured in alternating slices (bench/lib/load.js measurePair).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LIMITS_OFF, REPLAY_IDEMPOTENCY_KEY, createFixture, makeApiClient, replayBody, startAgentStub } from "./lib/fixture.js";
import { measurePair } from "./lib/load.js";
import { runCli, startServer } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";

const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
const TIMING = { warmupSeconds: 2, sliceSeconds: LOAD_SECONDS / 4, rounds: 4 };
const TARGET = 0.9; // limiter on: at least this share of the throughput with it off
/** Limits that never trigger: every request is counted, none refused. */
const LIMITS_NEVER_REACHED = {
  ASSURE_RATE_LIMIT_PER_MINUTE: "1000000000",
  ASSURE_UNAUTHENTICATED_PER_MINUTE: "1000000000",
  ASSURE_PUBLIC_PER_MINUTE: "1000000000",
  ASSURE_GITHUB_WEBHOOKS_PER_MINUTE: "1000000000",
  ASSURE_RUN_CREATES_PER_MINUTE: "1000000000",
  ASSURE_MAX_QUEUED_RUNS: "1000000000",
};

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "—");

export function describeLimitsBench() {
  return `Load: autocannon at saturation (10 connections), ${LOAD_SECONDS} s measured per target and case in 4 slices, alternating; the service with its limiter on (limits never reached) against it off`;
}

async function startWithFixture(root, workdir, name, limits, agentBaseUrl) {
  const dbPath = join(workdir, `${name}.db`);
  const service = await startServer(name, join(root, "build/app/main.js"), { ...limits, ASSURE_DB: dbPath, ASSURE_WORKERS: "0", LOG_LEVEL: "warn" });
  const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", name], { ASSURE_DB: dbPath });
  const fixture = await createFixture(makeApiClient(service.url, token), { agentBaseUrl, specPath: join(root, "examples/refund-agent.yaml") });
  return { service, token, fixture };
}

export async function runLimitsBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-load-"));
  const stops = [];
  try {
    const agent = await startAgentStub();
    stops.push(agent.stop);
    const on = await startWithFixture(root, workdir, "limiter-on", process.env.BENCH_LOAD_AA ? LIMITS_OFF : LIMITS_NEVER_REACHED, agent.baseUrl);
    stops.push(on.service.stop);
    const off = await startWithFixture(root, workdir, "limiter-off", LIMITS_OFF, agent.baseUrl);
    stops.push(off.service.stop);

    // The same request to each service, with that service's own key and fixture.
    const casesOf = ({ token, fixture }) => ({
      replay: { method: "POST", path: "/v1/runs", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": REPLAY_IDEMPOTENCY_KEY }, body: JSON.stringify(replayBody(fixture)), expectStatus: 200 },
      evidence: { method: "GET", path: `/v1/runs/${fixture.runId}/evidence`, headers: { authorization: `Bearer ${token}` }, body: undefined, expectStatus: 200 },
    });
    const cases = { on: casesOf(on), off: casesOf(off) };
    const rows = [];
    const verdicts = [];
    for (const [key, name] of [["replay", "POST /v1/runs (idempotent replay)"], ["evidence", "GET /v1/runs/{id}/evidence"]]) {
      log(`Load: ${name}, limiter on and off…`);
      // measurePair sends one case to two targets: here each target gets its own case (its own key and ids).
      const result = await measurePair(
        { ...cases.on[key], perTarget: { service: cases.on[key], baseline: cases.off[key] } },
        { service: on.service.url, baseline: off.service.url },
        TIMING,
      );
      const ratio = result.service.requestsPerSecond / result.baseline.requestsPerSecond;
      for (const [label, measured] of [["limiter on", result.service], ["limiter off", result.baseline]]) {
        rows.push([name, label, fixed(measured.requestsPerSecond, 0), fixed(measured.p50Ms, 2), fixed(measured.p99Ms, 2), String(measured.errors + measured.unexpectedStatus)]);
      }
      verdicts.push(`${ratio >= TARGET ? "PASS" : "FAIL"}  ${name}: limiter on ${fixed(ratio, 2)} x off (target >= ${TARGET})`);
    }
    console.log("\nLoad, limiter on (limits never reached) and off:\n");
    console.log(markdownTable(["Case", "Service", "Requests/s", "p50 (ms)", "p99 (ms)", "Errors"], rows));
    console.log("");
    for (const line of verdicts) console.log(line);
    console.log(`INFO  peak RSS: limiter on ${fixed(readProc(on.service.pid).peakRssMb, 0)} MB, off ${fixed(readProc(off.service.pid).peakRssMb, 0)} MB`);
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(workdir, { recursive: true, force: true });
  }
}
