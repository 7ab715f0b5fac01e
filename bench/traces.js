// The agent traces part of `npm run bench` (also alone: `node bench/run.js traces`). Two measures:
//
// - OTLP ingest: OTLP/HTTP protobuf exports, made by the OpenTelemetry SDK and its own serializer,
//   of the spans of live conversations (an http agent holds each request open until all its spans
//   were posted), posted concurrently to POST /otlp/v1/traces, beside a bare node:http server
//   decoding the same exports with the same package (bench/otlp-baseline.js). Spans per second at
//   saturation, and the export's p99 at 5,000 spans/s.
// - Engine throughput with trace capture: one run against the example http agent (200 ms per turn)
//   exporting its spans to the service, against the same run and agent with its tool calls read
//   from its answers and no spans (trace_wait_ms 0), alternating.
//
// See docs/benchmarks.md, "Agent traces".
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { LOCAL_SETTINGS, makeApiClient, runToEnd } from "./lib/fixture.js";
import { HOST, runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { readProc } from "./lib/proc.js";
import { exportFeed, makeSpanFactory, postExports, randomTraceparent, summarizeExports } from "./lib/otlp-load.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

/** Conversations held open while their spans are exported (the service's conversation slots). */
const LIVE = 64;
/** A conversation's trace: 100 spans, in 10 slices of 10 (its root span in the last). */
const SPANS_PER_SLICE = 10;
const SLICES_PER_TRACE = 10;
/** Spans in one export, in slices of as many conversations: a batch span processor's export holds the spans of the requests it served meanwhile. */
const SPANS_PER_EXPORT = Number(process.env.BENCH_TRACES_SPANS_PER_EXPORT ?? 100);
/** Conversations of the ingest run: more than the bench gets through while it posts. */
const INGEST_CONVERSATIONS = 10_000;
const CONNECTIONS = 16;
const TIMING = { warmupSeconds: 2, sliceSeconds: Number(process.env.BENCH_SLICE_SECONDS ?? 3), rounds: 4 };
const CASES = Number(process.env.BENCH_TRACES_CASES ?? 2000);
const LATENCY_MS = Number(process.env.BENCH_TRACES_LATENCY_MS ?? 200);
const ROUNDS = Number(process.env.BENCH_TRACES_ROUNDS ?? 3);
const CONCURRENCY = 16;
/** Diagnostics, not for the figures: node arguments for the measured service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
const SERVICE_NODE_ARGS = (process.env.BENCH_TRACES_NODE_ARGS ?? "").split(" ").filter(Boolean);

export const TRACES_TARGETS = { spansPerSecond: 5000, p99Ms: 50, captureRatio: 0.9 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;

export function describeTracesBench() {
  return (
    `Agent traces: OTLP ingest of ${SPANS_PER_EXPORT}-span protobuf exports (${SPANS_PER_SLICE} spans of each of ${SPANS_PER_EXPORT / SPANS_PER_SLICE} conversations, ${SPANS_PER_SLICE * SLICES_PER_TRACE} a conversation) into ${LIVE} live conversations at once from a client loop of ${CONNECTIONS} connections, at saturation and at ${TRACES_TARGETS.spansPerSecond} spans/s, ` +
    `${TIMING.warmupSeconds} s warm-up then ${TIMING.rounds * TIMING.sliceSeconds} s per target in ${TIMING.sliceSeconds} s slices alternating with a bare decoder; ` +
    `engine throughput of ${CASES} one-turn cases against the example http agent (${LATENCY_MS} ms) at concurrency ${CONCURRENCY}, spans exported vs tool calls from its answers (${ROUNDS} rounds, alternating, medians)`
  );
}

/** A service of its own on a fresh database, with an admin client and a project. */
async function startService(root, workdir, name) {
  const dbPath = join(workdir, `${name}.db`);
  const service = await startServer(
    "service",
    join(root, "build/app/main.js"),
    {
      ...LOCAL_SETTINGS,
      ASSURE_DB: dbPath,
      ASSURE_WORKERS: "1",
      ASSURE_MAX_CONVERSATIONS: String(LIVE),
      LOG_LEVEL: "warn",
    },
    { nodeArgs: SERVICE_NODE_ARGS },
  );
  const cli = (args) => runCli(join(root, "build/app/cli.js"), args, { ASSURE_DB: dbPath });
  const { token } = cli(["keys", "create", "--admin", "--name", `bench-${name}`]);
  const call = makeApiClient(service.url, token);
  const projectId = (await call("POST", "/v1/projects", { body: { name: `bench-${name}` } })).json.project_id;
  const agentId = (
    await call("POST", "/v1/agents", { body: { project_id: projectId, name: "refund-agent", version: "1.0.0" } })
  ).json.agent_id;
  const tracesKey = cli([
    "keys",
    "create",
    "--project",
    projectId,
    "--scopes",
    "traces:write",
    "--name",
    "agent",
  ]).token;
  const environment = async (environmentName, endpoint) =>
    (
      await call("POST", "/v1/environments", {
        body: { project_id: projectId, name: environmentName, agent_id: agentId, endpoint },
      })
    ).json.environment_id;
  const spec = async (document) =>
    (await call("POST", "/v1/test-specs", { body: { project_id: projectId, spec: document } })).json.test_spec_id;
  return { service: { ...service, dbPath }, call, tracesKey, environment, spec };
}

/** Polls a run (10 reads a second) until it ends. */
async function waitForRun(call, runId, timeoutMs = 10 * 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { json: run } = await call("GET", `/v1/runs/${runId}`);
    if (["COMPLETED", "INCONCLUSIVE", "FAILED"].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`Run ${runId} did not end within ${timeoutMs / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The spans the run's conversations recorded (their trace.received events), read from the database. */
function spansRecorded(dbPath, runId) {
  return sumOf(
    dbPath,
    "SELECT COALESCE(SUM(json_extract(data, '$.spans')), 0) FROM run_events WHERE run_id = ? AND type = 'trace.received'",
    runId,
  );
}

/** Conversations of the run whose trace arrived. */
function conversationsTraced(dbPath, runId) {
  return sumOf(dbPath, "SELECT COUNT(*) FROM run_events WHERE run_id = ? AND type = 'trace.received'", runId);
}

function sumOf(dbPath, sql, runId) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).pluck().get(runId);
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// OTLP ingest

/**
 * An http agent that holds each request open until the bench has posted every export of its
 * trace (`answer(traceparent)`), so each conversation is live while its spans come; `arrived`
 * lists the traceparents of requests not yet taken by the feed. Once `answerAll()` is called it
 * answers every request at once.
 */
async function startHoldingAgent() {
  const held = new Map();
  const arrived = [];
  let holding = true;
  const reply = (res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ reply: "Done." }));
  const server = createServer((req, res) => {
    if (req.method === "GET") return res.writeHead(200, { "content-type": "application/json" }).end("{}");
    req.resume();
    req.on("end", () => {
      if (!holding) return reply(res);
      const traceparent = String(req.headers.traceparent);
      held.set(traceparent, res);
      arrived.push(traceparent);
    });
  });
  await new Promise((resolve) => server.listen(0, HOST, resolve));
  return {
    baseUrl: `http://${HOST}:${server.address().port}`,
    arrived,
    get held() {
      return held.size;
    },
    answer(traceparent) {
      const res = held.get(traceparent);
      held.delete(traceparent);
      if (res) reply(res);
    },
    answerAll() {
      holding = false;
      arrived.length = 0;
      for (const res of held.values()) reply(res);
      held.clear();
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function measureIngest({ root, workdir }) {
  const agent = await startHoldingAgent();
  const { service, call, tracesKey, environment, spec } = await startService(root, workdir, "ingest");
  let baseline;
  const factory = await makeSpanFactory({ spansPerSlice: SPANS_PER_SLICE, slicesPerTrace: SLICES_PER_TRACE });
  const shape = {
    factory,
    width: LIVE,
    slicesPerTrace: SLICES_PER_TRACE,
    slicesPerExport: SPANS_PER_EXPORT / SPANS_PER_SLICE,
    spansPerSlice: SPANS_PER_SLICE,
  };
  try {
    const environmentId = await environment("held", {
      protocol: "http",
      base_url: agent.baseUrl,
      max_concurrency: LIVE,
      trace_wait_ms: 2000,
      request: { path: "/chat", body: { text: "{{message}}" } },
      response: { text: "reply" },
    });
    // More conversations than the bench gets through: the last ones are answered at once, without spans.
    const specId = await spec({
      schema_version: "1",
      name: "bench-live-conversations",
      defaults: { concurrency: LIVE, max_steps: 1, timeout_ms: 600_000 },
      scenarios: [
        {
          id: "live",
          vars: Array.from({ length: INGEST_CONVERSATIONS }, (_, i) => ({ n: i + 1 })),
          turns: [{ user: "Conversation {{n}}.", expect: [{ response: { contains: "Done" } }] }],
        },
      ],
      gates: [{ id: "DET", require: { expectations: "all" } }],
    });
    const { json: run } = await call("POST", "/v1/runs", {
      body: { test_spec_id: specId, environment_id: environmentId },
      headers: { "idempotency-key": "bench-ingest" },
    });
    const deadline = Date.now() + 60_000;
    while (agent.held < LIVE) {
      if (Date.now() > deadline) throw new Error(`only ${agent.held} of ${LIVE} conversations reached the agent`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    baseline = await startServer("baseline", join(root, "bench/otlp-baseline.js"), {});
    const feeds = {
      // Each live conversation's request gets its spans; once all are answered, the agent answers it.
      service: exportFeed({
        ...shape,
        traceparents: agent.arrived,
        onComplete: (traceparent) => agent.answer(traceparent),
      }),
      baseline: exportFeed({ ...shape, traceparents: { shift: randomTraceparent } }),
    };
    const targets = { service: service.url, baseline: baseline.url };
    const pids = { service: service.pid, baseline: baseline.pid };

    const slice = async (target, seconds, rate) => {
      const before = readProc(pids[target]).cpuMs;
      const measured = await postExports({
        url: targets[target],
        token: tracesKey,
        feed: feeds[target],
        spansPerSlice: SPANS_PER_SLICE,
        seconds,
        connections: CONNECTIONS,
        rate,
      });
      return { ...measured, cpuMs: readProc(pids[target]).cpuMs - before };
    };
    /** Warm-up, then slices alternating between the targets (S B, B S, …). */
    const measure = async (rate) => {
      await slice("service", TIMING.warmupSeconds, rate);
      await slice("baseline", TIMING.warmupSeconds, rate);
      const slices = { service: [], baseline: [] };
      for (let round = 0; round < TIMING.rounds; round++) {
        for (const target of round % 2 === 0 ? ["service", "baseline"] : ["baseline", "service"]) {
          slices[target].push(await slice(target, TIMING.sliceSeconds, rate));
        }
      }
      const of = (list) => summarizeExports(list);
      return {
        service: of(slices.service),
        baseline: of(slices.baseline),
        ratios: slices.service.map((one, i) => of([one]).spansPerSecond / of([slices.baseline[i]]).spansPerSecond),
      };
    };
    log("  at saturation…");
    const saturation = await measure(undefined);
    log(`  at ${TRACES_TARGETS.spansPerSecond} spans/s…`);
    const paced = await measure(TRACES_TARGETS.spansPerSecond / SPANS_PER_EXPORT);

    const problems = [];
    if (agent.held === 0) {
      problems.push(`the run's ${INGEST_CONVERSATIONS} conversations ran out while spans were posted`);
    }
    // Every span the service acknowledged is kept: the rest of the run is answered at once, and its traces counted.
    agent.answerAll();
    const ended = await waitForRun(call, run.run_id);
    if (ended.status !== "COMPLETED") problems.push(`the live conversations' run ended ${ended.status}`);
    const kept = spansRecorded(service.dbPath, run.run_id);
    const { sentSpans, answeredSpans, rejectedSpans } = feeds.service.counts;
    if (rejectedSpans > 0) problems.push(`${rejectedSpans} spans were rejected (partialSuccess)`);
    if (kept < answeredSpans - rejectedSpans || kept > sentSpans) {
      problems.push(`${kept} spans recorded; ${answeredSpans} answered, ${sentSpans} sent`);
    }
    return {
      saturation,
      paced,
      kept,
      answeredSpans,
      conversations: conversationsTraced(service.dbPath, run.run_id),
      peakRssMb: readProc(service.pid).peakRssMb,
      problems,
    };
  } catch (error) {
    log(`--- last output of the service (ingest) ---\n${service.output()}`);
    throw error;
  } finally {
    agent.answerAll();
    await baseline?.stop();
    await service.stop();
    await agent.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Engine throughput with trace capture

/** One turn that makes the agent run a tool: its call is judged, from its trace or its answer. */
function captureSpec(cases) {
  return {
    schema_version: "1",
    name: `bench-traced-${cases}-cases`,
    defaults: { concurrency: CONCURRENCY, max_steps: 2, timeout_ms: 30_000 },
    tools: [
      {
        name: "lookup_order",
        parameters: { type: "object", properties: { order_id: { type: "string" } } },
        mock: [{ return: { order_id: "A-100", status: "delivered", amount: 42.5, currency: "EUR" } }],
      },
    ],
    scenarios: [
      {
        id: "case",
        vars: Array.from({ length: cases }, (_, i) => ({ n: i + 1 })),
        turns: [
          {
            user: "Order A-100 arrived broken (case {{n}}). I want my money back.",
            expect: [
              { tool_called: { name: "lookup_order", args: { order_id: "A-100" } } },
              { response: { matches: "refund" } },
            ],
          },
        ],
      },
    ],
    gates: [{ id: "DET", require: { expectations: "all" } }],
  };
}

const CHAT = { path: "/chat", body: { session: "{{session_id}}", text: "{{message}}" } };

async function measureCapture({ root, workdir }) {
  const script = join(root, "build/examples/agent/main.js");
  const { service, call, tracesKey, environment, spec } = await startService(root, workdir, "capture");
  const agents = [];
  try {
    // The same agent twice: one exporting its spans to the service (the standard OTLP variables), one not.
    const traced = await startExampleAgent(script, {
      latencyMs: LATENCY_MS,
      env: {
        AGENT_PROTOCOL: "http",
        OTEL_EXPORTER_OTLP_ENDPOINT: `${service.url}/otlp`,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${tracesKey}`,
      },
    });
    agents.push(traced);
    const plain = await startExampleAgent(script, { latencyMs: LATENCY_MS, env: { AGENT_PROTOCOL: "http" } });
    agents.push(plain);
    const environments = {
      traces: await environment("traces", {
        protocol: "http",
        base_url: traced.baseUrl,
        max_concurrency: 64,
        request: CHAT,
        response: { text: "reply", session_id: "session" },
      }),
      reply: await environment("reply", {
        protocol: "http",
        base_url: plain.baseUrl,
        max_concurrency: 64,
        trace_wait_ms: 0,
        request: CHAT,
        response: {
          text: "reply",
          session_id: "session",
          tool_calls: "steps[?type=='tool'].{name: tool, arguments: args, result: result}",
        },
      }),
    };
    const measured = await spec(captureSpec(CASES));
    const warmUp = await spec(captureSpec(Math.min(CASES, 200)));
    const problems = [];
    const check = (run, what, source) => {
      if (run.status !== "COMPLETED" || run.verdict !== "PASS") {
        problems.push(`${what} ended ${run.status}/${run.verdict}${run.failure ? ` (${run.failure.cause})` : ""}`);
        return;
      }
      const sources = toolSources(service.dbPath, run.run_id);
      if (sources.length !== 1 || sources[0].kind !== source) {
        problems.push(`${what}: tool calls ${JSON.stringify(sources)}, expected ${source} only`);
      }
    };
    for (const side of ["traces", "reply"]) {
      const run = await runToEnd(call, { test_spec_id: warmUp, environment_id: environments[side] }, `warm-${side}`);
      check(run, `the warm-up (${side})`, side === "traces" ? "trace" : "reply");
    }
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const result = {};
      for (const side of round % 2 === 0 ? ["traces", "reply"] : ["reply", "traces"]) {
        const cpuBefore = readProc(service.pid).cpuMs;
        const run = await runToEnd(
          call,
          { test_spec_id: measured, environment_id: environments[side] },
          `round-${round}-${side}`,
        );
        check(run, `round ${round + 1} (${side})`, side === "traces" ? "trace" : "reply");
        result[side] = {
          wallMs: Date.parse(run.ended_at) - Date.parse(run.started_at),
          cpuMs: readProc(service.pid).cpuMs - cpuBefore,
        };
      }
      rounds.push(result);
    }
    return { rounds, peakRssMb: readProc(service.pid).peakRssMb, problems };
  } catch (error) {
    log(`--- last output of the service (capture) ---\n${service.output()}`);
    for (const agent of agents) log(`--- last output of an example agent ---\n${agent.output()}`);
    throw error;
  } finally {
    for (const agent of agents) await agent.stop();
    await service.stop();
  }
}

/** Where the run's tool calls came from: calls per source kind. */
function toolSources(dbPath, runId) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        "SELECT json_extract(data, '$.source.kind') AS kind, COUNT(*) AS calls FROM run_events WHERE run_id = ? AND type = 'tool.called' GROUP BY 1",
      )
      .all(runId);
  } finally {
    db.close();
  }
}

function deriveCapture(result) {
  const ratios = result.rounds.map((round) => round.reply.wallMs / round.traces.wallMs);
  const side = (name) => ({
    wallMs: median(result.rounds.map((round) => round[name].wallMs)),
    cpuMsPerCase: median(result.rounds.map((round) => round[name].cpuMs)) / CASES,
  });
  return {
    traces: side("traces"),
    reply: side("reply"),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
  };
}

function ingestTable(ingest) {
  const header = ["Load", "Target", "Exports", "Spans/s", "p50 ms", "p99 ms", "CPU µs/span", "Errors"];
  const row = (load, name, m) => [
    load,
    name,
    m.exports.toLocaleString("en"),
    fixed(m.spansPerSecond, 0),
    fixed(m.p50Ms, 2),
    fixed(m.p99Ms, 2),
    fixed(m.cpuUsPerSpan, 1),
    String(m.unexpected + m.errors),
  ];
  const paced = `${TRACES_TARGETS.spansPerSecond.toLocaleString("en")} spans/s`;
  return markdownTable(header, [
    row("saturation", "service (POST /otlp/v1/traces)", ingest.saturation.service),
    row("saturation", "bare decoder", ingest.saturation.baseline),
    row(paced, "service (POST /otlp/v1/traces)", ingest.paced.service),
    row(paced, "bare decoder", ingest.paced.baseline),
  ]);
}

function captureTable(capture) {
  const d = deriveCapture(capture);
  const header = ["Tool calls from", "Run s", "CPU ms/case"];
  return markdownTable(header, [
    ["the agent's spans (OTLP)", fixed(d.traces.wallMs / 1000, 2), fixed(d.traces.cpuMsPerCase, 2)],
    ["its answers (no spans, trace_wait_ms 0)", fixed(d.reply.wallMs / 1000, 2), fixed(d.reply.cpuMsPerCase, 2)],
  ]);
}

function targetLines(ingest, capture) {
  const d = deriveCapture(capture);
  const { saturation, paced } = ingest;
  const clean = ingest.problems.length === 0;
  const range = (ratios) => `${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)}`;
  const lines = [
    `${verdict(saturation.service.spansPerSecond >= TRACES_TARGETS.spansPerSecond && clean)}  OTLP ingest into ${LIVE} live conversations, ${SPANS_PER_EXPORT} spans an export, ${CONNECTIONS} connections: ` +
      `${fixed(saturation.service.spansPerSecond, 0)} spans/s (target >= ${TRACES_TARGETS.spansPerSecond}; ${fixed(saturation.service.spansPerSecond / saturation.baseline.spansPerSecond, 2)} x the bare decoder, rounds ${range(saturation.ratios)})`,
    `${verdict(paced.service.p99Ms < TRACES_TARGETS.p99Ms && paced.service.spansPerSecond >= 0.95 * TRACES_TARGETS.spansPerSecond && clean)}  OTLP export answer p99 at ${TRACES_TARGETS.spansPerSecond} spans/s: ` +
      `${fixed(paced.service.p99Ms, 2)} ms (target < ${TRACES_TARGETS.p99Ms}; ${fixed(paced.service.spansPerSecond, 0)} spans/s held; the bare decoder ${fixed(paced.baseline.p99Ms, 2)} ms)`,
    `${verdict(d.ratio >= TRACES_TARGETS.captureRatio && capture.problems.length === 0)}  Engine throughput with trace capture, ${CASES} cases, agent ${LATENCY_MS} ms, concurrency ${CONCURRENCY}: ` +
      `${fixed(d.ratio, 2)} x without (rounds ${fixed(d.range[0], 2)}–${fixed(d.range[1], 2)}; target >= ${TRACES_TARGETS.captureRatio})`,
    `INFO  ${ingest.kept.toLocaleString("en")} spans recorded in ${ingest.conversations.toLocaleString("en")} conversations' traces, ${ingest.answeredSpans.toLocaleString("en")} acknowledged to the exporter (warm-ups included); peak RSS ${fixed(ingest.peakRssMb, 0)} MB (ingest), ${fixed(capture.peakRssMb, 0)} MB (capture)`,
  ];
  for (const problem of [...ingest.problems, ...capture.problems]) lines.push(`WARNING ${problem}`);
  return lines;
}

/** Runs the traces bench and prints its tables and target lines to stdout. */
export async function runTracesBench({ root }) {
  if (!isCount(SPANS_PER_EXPORT / SPANS_PER_SLICE, LIVE) || !isCount(CASES, 10_000) || !isCount(ROUNDS, 99)) {
    throw new Error(
      `BENCH_TRACES_* settings must be whole numbers in range (spans an export: a multiple of ${SPANS_PER_SLICE}, at most ${SPANS_PER_SLICE * LIVE})`,
    );
  }
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-traces-"));
  try {
    log("Traces: OTLP ingest…");
    const ingest = await measureIngest({ root, workdir });
    log(
      `  ${fixed(ingest.saturation.service.spansPerSecond, 0)} spans/s at saturation; p99 ${fixed(ingest.paced.service.p99Ms, 2)} ms at ${TRACES_TARGETS.spansPerSecond} spans/s`,
    );
    log(`Traces: engine throughput with trace capture, ${CASES} cases…`);
    const capture = await measureCapture({ root, workdir });
    console.log(`\nOTLP ingest (${SPANS_PER_EXPORT} spans an export, ${CONNECTIONS} connections):\n`);
    console.log(ingestTable(ingest));
    console.log(`\nEngine throughput with trace capture (medians over ${ROUNDS} rounds):\n`);
    console.log(captureTable(capture));
    console.log("");
    for (const line of targetLines(ingest, capture)) console.log(line);
    return { ingest, capture };
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}
