// The run engine part of `npm run bench` (also alone: `node bench/run.js engine`).
// What users wait for: one run of N single-turn cases (a scenario with a table of N rows)
// against the example agent answering after a fixed latency, its conversations held at run
// concurrency 16 and 64, beside a bare client loop making the same agent calls at the same
// concurrency (bench/lib/agent-client.js) in a process of its own (bench/engine-baseline.js);
// the engine's overhead per agent call at concurrency 1 against an agent that answers at once;
// and the service's peak memory over a 10,000-case run at concurrency 64. See
// docs/benchmarks.md, "Run engine".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_SETTINGS, makeApiClient, runToEnd } from "./lib/fixture.js";
import { runCli, startExampleAgent, startLineWorker, startServer } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

const CASES = Number(process.env.BENCH_ENGINE_CASES ?? 2000);
const LATENCY_MS = Number(process.env.BENCH_ENGINE_LATENCY_MS ?? 200);
const MEMORY_CASES = Number(process.env.BENCH_ENGINE_MEMORY_CASES ?? 10_000);
/** Rounds per level, alternating which side goes first (S B, B S, …); figures are medians over them. */
const ROUNDS = Number(process.env.BENCH_ENGINE_ROUNDS ?? 3);
/** Diagnostics, not for the figures: node arguments for the measured service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
const SERVICE_NODE_ARGS = (process.env.BENCH_ENGINE_NODE_ARGS ?? "").split(" ").filter(Boolean);
const MODEL = "refund-agent";

export const ENGINE_TARGETS = { ratio: 0.9, overheadMs: 1, rssMb: 200 };

/** What each level measures; the memory level has no baseline (nothing to compare memory with). */
function levels() {
  return [
    { name: "throughput", concurrency: 16, latencyMs: LATENCY_MS, cases: CASES, rounds: ROUNDS, baseline: true },
    { name: "throughput", concurrency: 64, latencyMs: LATENCY_MS, cases: CASES, rounds: ROUNDS, baseline: true },
    { name: "overhead", concurrency: 1, latencyMs: 0, cases: CASES, rounds: ROUNDS, baseline: true },
    { name: "memory", concurrency: 64, latencyMs: LATENCY_MS, cases: MEMORY_CASES, rounds: 1, baseline: false },
  ];
}

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;

/** One scenario with a table of `cases` rows: a single turn each, one agent call, one expectation. */
export function benchSpec(cases, concurrency) {
  return {
    schema_version: "1",
    name: `bench-${cases}-cases`,
    defaults: { concurrency, max_steps: 2, timeout_ms: 30_000 },
    scenarios: [
      {
        id: "case",
        vars: Array.from({ length: cases }, (_, i) => ({ n: i + 1 })),
        turns: [{ user: "Hello, this is case {{n}}.", expect: [{ response: { matches: "help" } }] }],
      },
    ],
    gates: [{ id: "DET", require: { expectations: "all" } }],
  };
}

async function measureLevel(level, { root, agents, workdir }) {
  const dbPath = join(workdir, `${level.name}-c${level.concurrency}.db`);
  const env = {
    ...LOCAL_SETTINGS,
    ASSURE_DB: dbPath,
    ASSURE_WORKERS: "1",
    ASSURE_MAX_CONVERSATIONS: "64",
    LOG_LEVEL: "warn",
  };
  const service = await startServer("service", join(root, "build/app/main.js"), env, { nodeArgs: SERVICE_NODE_ARGS });
  let baseline;
  try {
    const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "bench-engine"], {
      ASSURE_DB: dbPath,
    });
    const call = makeApiClient(service.url, token);
    const project = (await call("POST", "/v1/projects", { body: { name: "bench-engine" } })).json.project_id;
    const agentId = (
      await call("POST", "/v1/agents", { body: { project_id: project, name: "refund-agent", version: "1.0.0" } })
    ).json.agent_id;
    const environment = async (name, agent) =>
      (
        await call("POST", "/v1/environments", {
          body: {
            project_id: project,
            name,
            agent_id: agentId,
            endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: MODEL, max_concurrency: 64 },
          },
        })
      ).json.environment_id;
    const measured = agents.get(level.latencyMs);
    const warm = agents.get(0);
    const measuredEnvironment = await environment("measured", measured);
    const warmEnvironment = await environment("warm-up", warm);
    const spec = (
      await call("POST", "/v1/test-specs", {
        body: { project_id: project, spec: benchSpec(level.cases, level.concurrency) },
      })
    ).json;
    const runBody = (environmentId) => ({ test_spec_id: spec.test_spec_id, environment_id: environmentId });
    const problems = [];
    const checkRun = (run, what) => {
      if (run.status !== "COMPLETED" || run.verdict !== "PASS") {
        problems.push(
          `${what} ended ${run.status}/${run.verdict}${run.failure ? ` (${run.failure.cause}: ${run.failure.message})` : ""}`,
        );
      }
    };

    if (level.baseline) {
      // Both sides hold the run once against the agent that answers at once, so V8 has optimised their hot code before the clock starts.
      checkRun(await runToEnd(call, runBody(warmEnvironment), "warm-up"), "the service's warm-up run");
      baseline = await startLineWorker("the baseline", join(root, "bench/engine-baseline.js"), {
        BENCH_BASELINE: JSON.stringify({
          baseUrl: measured.baseUrl,
          warmupBaseUrl: warm.baseUrl,
          agentPid: measured.pid,
          model: MODEL,
          spec: spec.spec,
          concurrency: level.concurrency,
        }),
      });
    }
    const rounds = [];
    for (let round = 0; round < level.rounds; round++) {
      const result = {};
      for (const side of round % 2 === 0 ? ["service", "baseline"] : ["baseline", "service"]) {
        if (side === "baseline") {
          if (!baseline) continue;
          result.baseline = await baseline.request({});
          if (result.baseline.calls !== level.cases) {
            problems.push(`the baseline made ${result.baseline.calls} agent calls for ${level.cases} cases`);
          }
          continue;
        }
        const cpuBefore = readProc(service.pid).cpuMs;
        const run = await runToEnd(call, runBody(measuredEnvironment), `round-${round}`);
        checkRun(run, `round ${round + 1}`);
        result.service = {
          wallMs: Date.parse(run.ended_at) - Date.parse(run.started_at),
          cpuMs: readProc(service.pid).cpuMs - cpuBefore,
        };
      }
      rounds.push(result);
    }
    return { ...level, rounds, peakRssMb: readProc(service.pid).peakRssMb, problems };
  } catch (error) {
    log(`--- last output of the service (${level.name}, concurrency ${level.concurrency}) ---\n${service.output()}`);
    throw error;
  } finally {
    await baseline?.stop();
    await service.stop();
  }
}

function derive(level) {
  const serviceWallMs = median(level.rounds.map((round) => round.service.wallMs));
  const serviceCpuPerCall = median(level.rounds.map((round) => round.service.cpuMs)) / level.cases;
  if (!level.baseline) return { serviceWallMs, serviceCpuPerCall };
  const ratios = level.rounds.map(({ service, baseline }) => baseline.wallMs / service.wallMs);
  const baselineWallMs = median(level.rounds.map((round) => round.baseline.wallMs));
  return {
    serviceWallMs,
    serviceCpuPerCall,
    baselineWallMs,
    baselineCpuPerCall: median(level.rounds.map((round) => round.baseline.cpuMs)) / level.cases,
    ratio: median(ratios),
    ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    // Added wall time per agent call, as seen by one of the `concurrency` lanes.
    overheadMs: ((serviceWallMs - baselineWallMs) * level.concurrency) / level.cases,
  };
}

export function engineTable(results) {
  const header = [
    "Level",
    "Concurrency",
    "Agent latency ms",
    "Cases",
    "Service s",
    "Baseline s",
    "Ratio (range)",
    "Overhead ms/call",
    "Service CPU ms/call",
    "Baseline CPU ms/call",
    "Peak RSS MB",
  ];
  const rows = results.map((level) => {
    const d = derive(level);
    return [
      level.name,
      String(level.concurrency),
      String(level.latencyMs),
      level.cases.toLocaleString("en"),
      fixed(d.serviceWallMs / 1000, 2),
      fixed(d.baselineWallMs / 1000, 2),
      level.baseline ? `${fixed(d.ratio, 2)} (${fixed(d.ratioRange[0], 2)}–${fixed(d.ratioRange[1], 2)})` : "n/a",
      fixed(d.overheadMs, 2),
      fixed(d.serviceCpuPerCall, 2),
      fixed(d.baselineCpuPerCall, 2),
      fixed(level.peakRssMb, 0),
    ];
  });
  return markdownTable(header, rows);
}

export function engineTargetLines(results) {
  const lines = [];
  const clean = (level) => level.problems.length === 0;
  for (const level of results) {
    const d = derive(level);
    if (level.name === "throughput") {
      lines.push(
        `${verdict(d.ratio >= ENGINE_TARGETS.ratio && clean(level))}  Engine throughput at concurrency ${level.concurrency}, agent latency ${level.latencyMs} ms, ` +
          `${level.cases} cases: ${fixed(d.ratio, 2)} x the bare loop (target >= ${ENGINE_TARGETS.ratio})`,
      );
    } else if (level.name === "overhead") {
      lines.push(
        `${verdict(d.overheadMs <= ENGINE_TARGETS.overheadMs && clean(level))}  Engine overhead per agent call at concurrency 1, no latency: ` +
          `${fixed(d.overheadMs, 2)} ms (target <= ${ENGINE_TARGETS.overheadMs})`,
      );
    } else {
      lines.push(
        `${verdict(level.peakRssMb <= ENGINE_TARGETS.rssMb && clean(level))}  Peak RSS of the service over a ${level.cases.toLocaleString("en")}-case run at concurrency ` +
          `${level.concurrency}: ${fixed(level.peakRssMb, 0)} MB (target <= ${ENGINE_TARGETS.rssMb})`,
      );
    }
  }
  for (const level of results) {
    for (const problem of level.problems) {
      lines.push(`WARNING ${level.name} at concurrency ${level.concurrency}: ${problem}`);
    }
  }
  return lines;
}

export function describeEngineBench() {
  return (
    `Run engine: one run of ${CASES} single-turn cases (a table of ${CASES} rows) against the example agent answering after ${LATENCY_MS} ms, ` +
    `at run concurrency 16 and 64, beside a bare client loop at the same concurrency (${ROUNDS} rounds, alternating, medians); ` +
    `the same at concurrency 1 against an agent answering at once (overhead per call); peak RSS over one ${MEMORY_CASES}-case run at concurrency 64. ` +
    "Each level on a fresh service (ASSURE_WORKERS=1) and database; the example agents in processes of their own"
  );
}

/** Runs the engine bench and prints its table and target lines to stdout. */
export async function runEngineBench({ root }) {
  if (!isCount(CASES, 10_000) || !isCount(MEMORY_CASES, 10_000)) {
    throw new Error("BENCH_ENGINE_CASES and BENCH_ENGINE_MEMORY_CASES must be whole numbers from 1 to 10000");
  }
  if (!isCount(ROUNDS, 99)) throw new Error("BENCH_ENGINE_ROUNDS must be a whole number from 1 to 99");
  if (!Number.isInteger(LATENCY_MS) || LATENCY_MS < 0) {
    throw new Error("BENCH_ENGINE_LATENCY_MS must be a whole number of milliseconds");
  }
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-engine-"));
  const agents = new Map();
  try {
    log("Starting the example agents…");
    for (const latencyMs of new Set([0, LATENCY_MS])) {
      agents.set(latencyMs, await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs }));
    }
    const results = [];
    for (const level of levels()) {
      log(
        `Engine: ${level.name}, concurrency ${level.concurrency}, ${level.cases} cases, agent latency ${level.latencyMs} ms…`,
      );
      const result = await measureLevel(level, { root, agents, workdir });
      const d = derive(result);
      log(
        `  service ${fixed(d.serviceWallMs / 1000, 2)} s${level.baseline ? `, baseline ${fixed(d.baselineWallMs / 1000, 2)} s` : ""}, peak RSS ${fixed(result.peakRssMb, 0)} MB`,
      );
      results.push(result);
    }
    console.log(`\nRun engine (medians over the rounds):\n`);
    console.log(engineTable(results));
    console.log("");
    for (const line of engineTargetLines(results)) console.log(line);
    return results;
  } catch (error) {
    for (const agent of agents.values()) log(`--- last output of the example agent ---\n${agent.output()}`);
    throw error;
  } finally {
    for (const agent of agents.values()) await agent.stop();
    rmSync(workdir, { recursive: true, force: true });
  }
}
