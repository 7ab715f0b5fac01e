// The several-nodes part of `npm run bench` (also alone: `node bench/run.js nodes`).
// Service nodes on one PostgreSQL database, as behind a load balancer:
// - scaling: two nodes against one, each node's conversations capped (ASSURE_MAX_CONVERSATIONS),
//   the same 2,000 cases spread over several runs (a run is held by one node at a time), against
//   the example agent answering after 200 ms; rounds alternate between the one-node and the
//   two-node cluster, each on a database of its own, all up at once;
// - failover: three nodes with 50 runs in flight, one killed -9: every run ends with the verdict
//   it has without kills, each case held once.
// See docs/benchmarks.md, "Several nodes".
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { benchSpec } from "./engine.js";
import { LOCAL_SETTINGS, createBenchProject, makeApiClient } from "./lib/fixture.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { createScratchDatabase, newEncryptionKey, postgresSettings, postgresUnreachable } from "./lib/postgres.js";
import { readProc } from "./lib/proc.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

const CASES = Number(process.env.BENCH_NODES_CASES ?? 2000);
const RUNS = Number(process.env.BENCH_NODES_RUNS ?? 8);
const LATENCY_MS = Number(process.env.BENCH_NODES_LATENCY_MS ?? 200);
const ROUNDS = Number(process.env.BENCH_NODES_ROUNDS ?? 3);
const FAILOVER_RUNS = Number(process.env.BENCH_NODES_FAILOVER_RUNS ?? 50);
/** Conversations each node holds at once: what makes a second node worth having. */
const NODE_CONVERSATIONS = 16;
/** Runs each node holds at once: half the runs of a round, so each of two nodes takes its share. */
const NODE_WORKERS = Math.max(1, Math.ceil(RUNS / 2));
const FAILOVER_NODES = 3;
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);

export const NODES_TARGETS = { scaling: 1.8 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const verdict = (pass) => (pass ? "PASS" : "FAIL");
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` nodes on one scratch database, started together (they migrate it once, under its lock). */
async function startCluster(root, count, settings, cleanups) {
  const database = await createScratchDatabase();
  cleanups.push(database.drop);
  const env = { ...LOCAL_SETTINGS, ...postgresSettings(database, newEncryptionKey()), LOG_LEVEL: "info", ...settings };
  const nodes = await Promise.all(
    Array.from({ length: count }, (_, i) => startServer(`node ${i + 1}`, join(root, "build/app/main.js"), env)),
  );
  for (const node of nodes) cleanups.push(node.stop);
  const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "bench-nodes"], env);
  // On PostgreSQL a run's creation waits behind the node's group commits, which take seconds on a loaded machine.
  return { nodes, clients: nodes.map((node) => makeApiClient(node.url, token, { timeoutMs: 60_000 })) };
}

async function waitForRuns(client, runIds, { timeoutMs = 10 * 60_000, everyMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = [];
    for (const id of runIds) runs.push((await client("GET", `/v1/runs/${id}`)).json);
    if (runs.every((run) => TERMINAL.has(run.status))) return runs;
    if (Date.now() > deadline) throw new Error(`Runs did not end within ${timeoutMs / 60_000} minutes`);
    await sleep(everyMs);
  }
}

/** The runs among `runIds` this node took from the queue, as its log says. */
const runsTakenBy = (node, runIds) => runIds.filter((id) => node.output().includes(`Run ${id}: QUEUED → RUNNING`));

// --- Scaling -------------------------------------------------------------------------------------

async function prepareScaling(cluster, agents) {
  const call = cluster.clients[0];
  const project = await createBenchProject(call, "bench-nodes", {
    fast: agents.fast.baseUrl,
    slow: agents.slow.baseUrl,
  });
  const addSpec = async (cases) =>
    (
      await call("POST", "/v1/test-specs", {
        body: { project_id: project.project, spec: benchSpec(cases, NODE_CONVERSATIONS) },
      })
    ).json.test_spec_id;
  return { ...cluster, project, spec: await addSpec(CASES / RUNS), warmUpSpec: await addSpec(NODE_CONVERSATIONS) };
}

/** One round (a warm-up: runs of a few cases against the agent that answers at once): RUNS runs created through the cluster's nodes in turn; conversations a second from the first creation to the last end. */
async function scalingRound(cluster, label, { warmUp = false } = {}) {
  const runIds = [];
  const clusterCpuMs = () => cluster.nodes.reduce((sum, node) => sum + readProc(node.pid).cpuMs, 0);
  const cpuBefore = clusterCpuMs();
  for (let i = 0; i < RUNS; i++) {
    const call = cluster.clients[i % cluster.clients.length];
    const { json } = await call("POST", "/v1/runs", {
      body: warmUp
        ? { test_spec_id: cluster.warmUpSpec, environment_id: cluster.project.environments.fast }
        : { test_spec_id: cluster.spec, environment_id: cluster.project.environments.slow },
      headers: { "idempotency-key": `${label}-${i}` },
    });
    runIds.push(json.run_id);
  }
  const runs = await waitForRuns(cluster.clients[0], runIds);
  const cpuMs = clusterCpuMs() - cpuBefore;
  const first = Math.min(...runs.map((run) => Date.parse(run.created_at)));
  const last = Math.max(...runs.map((run) => Date.parse(run.ended_at)));
  return {
    wallMs: last - first,
    perSecond: CASES / ((last - first) / 1000),
    /** The nodes' CPU time (all threads) over the round, per conversation. */
    cpuMsPerCase: cpuMs / CASES,
    failed: runs.filter((run) => run.status !== "COMPLETED" || run.verdict !== "PASS").length,
    runsPerNode: cluster.nodes.map((node) => runsTakenBy(node, runIds).length),
  };
}

async function measureScaling(root, agents, cleanups) {
  const settings = {
    ASSURE_WORKERS: String(NODE_WORKERS),
    ASSURE_MAX_RUNS_PER_PROJECT: String(RUNS),
    ASSURE_MAX_CONVERSATIONS: String(NODE_CONVERSATIONS),
  };
  log("Nodes: starting one node on a database, two on another…");
  const clusters = {
    one: await prepareScaling(await startCluster(root, 1, settings, cleanups), agents),
    two: await prepareScaling(await startCluster(root, 2, settings, cleanups), agents),
  };
  for (const side of ["one", "two"]) {
    log(`Nodes: warm-up on ${side === "one" ? "one node" : "two nodes"}…`);
    await scalingRound(clusters[side], "warm-up", { warmUp: true });
  }
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result = {};
    for (const side of round % 2 === 0 ? ["one", "two"] : ["two", "one"]) {
      log(`Nodes: round ${round + 1} on ${side === "one" ? "one node" : "two nodes"}…`);
      result[side] = await scalingRound(clusters[side], `round-${round}`);
    }
    rounds.push(result);
  }
  const ratios = rounds.map((round) => round.two.perSecond / round.one.perSecond);
  return {
    rounds,
    one: median(rounds.map((round) => round.one.perSecond)),
    two: median(rounds.map((round) => round.two.perSecond)),
    oneWallMs: median(rounds.map((round) => round.one.wallMs)),
    twoWallMs: median(rounds.map((round) => round.two.wallMs)),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
    failed: rounds.reduce((sum, round) => sum + round.one.failed + round.two.failed, 0),
  };
}

// --- Failover ------------------------------------------------------------------------------------

/** The example spec's deterministic part (its scenarios' expectations and the DET gate), two repeats at concurrency 4. */
function deterministicSpec(root) {
  const spec = parse(readFileSync(join(root, "examples/refund-agent.yaml"), "utf8"));
  spec.name = "refund-agent-deterministic";
  spec.defaults = { ...spec.defaults, repeat: 2, timeout_ms: 30_000, concurrency: 4 };
  for (const scenario of spec.scenarios) delete scenario.metrics;
  delete spec.security;
  spec.gates = spec.gates.filter((gate) => gate.id === "DET");
  return spec;
}

async function readPages(call, path) {
  const items = [];
  let cursor = null;
  do {
    const { json } = await call("GET", `${path}?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    items.push(...json.data);
    cursor = json.next_cursor;
  } while (cursor);
  return items;
}

/**
 * What the tests' expectEachHeldOnce checks, counted: each planned case completed once, none left
 * running, each one cut off retried with a later attempt.
 */
function heldOnce(conversations, planned) {
  const completed = conversations.filter((c) => c.status === "completed");
  const key = (c) => `${c.kind} ${c.scenario_id} ${c.repeat_index}`;
  const completedKeys = new Set(completed.map(key));
  const interrupted = conversations.filter((c) => c.status === "interrupted");
  const running = conversations.filter((c) => c.status === "running").length;
  const unretried = interrupted.filter(
    (cut) => !completed.some((c) => key(c) === key(cut) && c.attempt > cut.attempt),
  ).length;
  return {
    completed: completed.length,
    duplicates: completed.length - completedKeys.size,
    running,
    interrupted: interrupted.length,
    unretried,
    ok: completed.length === planned && completedKeys.size === planned && unretried === 0 && running === 0,
  };
}

const gapFree = (events) =>
  events.every((event, i) => event.sequence === i + 1) && new Set(events.map((e) => e.event_id)).size === events.length;

async function measureFailover(root, agents, cleanups) {
  log(`Failover: starting ${FAILOVER_NODES} nodes on a database…`);
  const cluster = await startCluster(
    root,
    FAILOVER_NODES,
    {
      ASSURE_WORKERS: "2",
      ASSURE_WORKER_LEASE_MS: "1000",
      ASSURE_DATABASE_POOL_SIZE: "4",
      ASSURE_MAX_RUNS_PER_PROJECT: String(2 * FAILOVER_NODES),
    },
    cleanups,
  );
  const [survivor] = cluster.clients;
  const project = await createBenchProject(survivor, "bench-failover", { slow: agents.slow.baseUrl });
  const spec = (
    await survivor("POST", "/v1/test-specs", { body: { project_id: project.project, spec: deterministicSpec(root) } })
  ).json.test_spec_id;
  const body = { test_spec_id: spec, environment_id: project.environments.slow };

  log("Failover: a reference run, without kills…");
  const referenceId = (await survivor("POST", "/v1/runs", { body, headers: { "idempotency-key": "reference" } })).json
    .run_id;
  const [reference] = await waitForRuns(survivor, [referenceId]);
  const planned = (await readPages(survivor, `/v1/runs/${referenceId}/conversations`)).filter(
    (c) => c.status === "completed",
  ).length;

  log(`Failover: ${FAILOVER_RUNS} runs, then node 2 killed -9 once it holds one…`);
  // Created all at once, so that few have ended before the kill.
  const runIds = await Promise.all(
    Array.from(
      { length: FAILOVER_RUNS },
      async (_, i) =>
        (
          await cluster.clients[i % FAILOVER_NODES]("POST", "/v1/runs", {
            body,
            headers: { "idempotency-key": `run-${i}` },
          })
        ).json.run_id,
    ),
  );
  const victim = cluster.nodes[1];
  const inHand = () => runsTakenBy(victim, runIds).filter((id) => !victim.output().includes(`Run ${id}: RUNNING → `));
  const waitStarted = Date.now();
  while (inHand().length === 0) {
    if (Date.now() - waitStarted > 120_000) throw new Error("Node 2 took no run within 2 minutes");
    await sleep(20);
  }
  const heldAtKill = inHand().length;
  const takenBeforeKill = runsTakenBy(victim, runIds).length;
  await victim.kill();
  const killedAt = Date.now();
  const inFlight = (await Promise.all(runIds.map(async (id) => (await survivor("GET", `/v1/runs/${id}`)).json))).filter(
    (run) => !TERMINAL.has(run.status),
  ).length;
  const ended = await waitForRuns(survivor, runIds, { timeoutMs: 5 * 60_000, everyMs: 500 });
  const lastEndMs = Math.max(...ended.map((run) => Date.parse(run.ended_at))) - killedAt;

  log("Failover: reading every run's conversations and trace…");
  const counts = { sameVerdict: 0, heldOnce: 0, gapFree: 0, resumed: 0, completed: 0, duplicates: 0, running: 0 };
  counts.interrupted = 0;
  counts.unretried = 0;
  for (const [i, id] of runIds.entries()) {
    if (ended[i].status === reference.status && ended[i].verdict === reference.verdict) counts.sameVerdict++;
    const held = heldOnce(await readPages(survivor, `/v1/runs/${id}/conversations`), planned);
    const trace = await readPages(survivor, `/v1/runs/${id}/trace`);
    if (held.ok) counts.heldOnce++;
    if (gapFree(trace)) counts.gapFree++;
    if (trace.some((event) => event.type === "run.resumed")) counts.resumed++;
    for (const field of ["completed", "duplicates", "running", "interrupted", "unretried"]) {
      counts[field] += held[field];
    }
  }
  return {
    reference: `${reference.status}/${reference.verdict}`,
    planned,
    heldAtKill,
    takenBeforeKill,
    inFlight,
    lastEndMs,
    ...counts,
  };
}

// --- Report --------------------------------------------------------------------------------------

function printScaling(scaling) {
  console.log(
    `\nSeveral nodes on PostgreSQL: ${CASES} cases as ${RUNS} runs of ${CASES / RUNS} (run concurrency ${NODE_CONVERSATIONS}), ` +
      `ASSURE_MAX_CONVERSATIONS=${NODE_CONVERSATIONS} and ASSURE_WORKERS=${NODE_WORKERS} per node, agent latency ${LATENCY_MS} ms:\n`,
  );
  const rows = scaling.rounds.map((round, i) => [
    String(i + 1),
    fixed(round.one.wallMs / 1000, 2),
    fixed(round.one.perSecond, 1),
    fixed(round.two.wallMs / 1000, 2),
    fixed(round.two.perSecond, 1),
    `${fixed(round.one.cpuMsPerCase, 2)} / ${fixed(round.two.cpuMsPerCase, 2)}`,
    round.two.runsPerNode.join(" + "),
    fixed(round.two.perSecond / round.one.perSecond, 2),
  ]);
  rows.push([
    "median",
    fixed(scaling.oneWallMs / 1000, 2),
    fixed(scaling.one, 1),
    fixed(scaling.twoWallMs / 1000, 2),
    fixed(scaling.two, 1),
    "",
    "",
    `${fixed(scaling.ratio, 2)} (${fixed(scaling.range[0], 2)}–${fixed(scaling.range[1], 2)})`,
  ]);
  console.log(
    markdownTable(
      [
        "Round",
        "One node s",
        "One node conv/s",
        "Two nodes s",
        "Two nodes conv/s",
        "Nodes' CPU ms/conv (one / two)",
        "Runs per node (two)",
        "Ratio",
      ],
      rows,
    ),
  );
}

function printFailover(failover) {
  console.log(`\nFailover: ${FAILOVER_NODES} nodes, ${FAILOVER_RUNS} runs in flight, node 2 killed -9:\n`);
  const rows = [
    ["Verdict without kills (reference run)", failover.reference],
    ["Cases per run (completed in the reference)", String(failover.planned)],
    ["Runs node 2 had taken / held when killed", `${failover.takenBeforeKill} / ${failover.heldAtKill}`],
    ["Runs not yet terminal just after the kill", `${failover.inFlight} / ${FAILOVER_RUNS}`],
    ["Runs terminal with the reference's verdict", `${failover.sameVerdict} / ${FAILOVER_RUNS}`],
    ["Runs with each case completed once", `${failover.heldOnce} / ${FAILOVER_RUNS}`],
    [
      "Cases completed (all runs) / duplicates / left running",
      `${failover.completed} / ${failover.duplicates} / ${failover.running}`,
    ],
    ["Conversations cut off by the kill / not retried", `${failover.interrupted} / ${failover.unretried}`],
    ["Runs resumed by another node", String(failover.resumed)],
    ["Traces gap-free", `${failover.gapFree} / ${FAILOVER_RUNS}`],
    ["Last run ended, after the kill", `${fixed(failover.lastEndMs / 1000, 1)} s`],
  ];
  console.log(markdownTable(["Check", "Count"], rows));
}

function printTargets(scaling, failover) {
  console.log("");
  console.log(
    `${verdict(scaling.ratio >= NODES_TARGETS.scaling && scaling.failed === 0)}  Two nodes against one on PostgreSQL, ` +
      `${NODE_CONVERSATIONS} conversations per node, agent latency ${LATENCY_MS} ms, ${CASES} cases: ` +
      `${fixed(scaling.ratio, 2)} x the conversations per second (target >= ${NODES_TARGETS.scaling})`,
  );
  const failoverPass =
    failover.sameVerdict === FAILOVER_RUNS &&
    failover.heldOnce === FAILOVER_RUNS &&
    failover.gapFree === FAILOVER_RUNS &&
    failover.resumed > 0;
  console.log(
    `${verdict(failoverPass)}  kill -9 of one of ${FAILOVER_NODES} nodes with ${FAILOVER_RUNS} runs in flight: ` +
      `${failover.sameVerdict} runs with the verdict they have without kills, ${failover.heldOnce} with each case held once, ` +
      `${failover.resumed} resumed by another node (target: all ${FAILOVER_RUNS}, all ${FAILOVER_RUNS}, at least 1)`,
  );
  if (scaling.failed > 0) console.log(`WARNING scaling: ${scaling.failed} runs did not end COMPLETED/PASS`);
}

export function describeNodesBench() {
  return (
    `Several nodes: on PostgreSQL (scratch databases), one node against two, each holding at most ${NODE_CONVERSATIONS} conversations, ` +
    `${CASES} cases as ${RUNS} runs against the example agent answering after ${LATENCY_MS} ms, ${ROUNDS} rounds alternating, medians; ` +
    `${FAILOVER_NODES} nodes with ${FAILOVER_RUNS} runs in flight, one killed -9`
  );
}

/** Runs the several-nodes bench and prints its tables and target lines; says so and returns if PostgreSQL does not answer. */
export async function runNodesBench({ root }) {
  if (!isCount(RUNS, 64) || !isCount(CASES / RUNS, 10_000)) {
    throw new Error("BENCH_NODES_RUNS (1 to 64) must divide BENCH_NODES_CASES into whole runs of at most 10000 cases");
  }
  if (!isCount(ROUNDS, 99) || !isCount(FAILOVER_RUNS, 1000)) {
    throw new Error("BENCH_NODES_ROUNDS (1 to 99) and BENCH_NODES_FAILOVER_RUNS (1 to 1000) must be whole numbers");
  }
  const unreachable = await postgresUnreachable();
  if (unreachable) {
    console.log(`Several nodes: skipped, PostgreSQL does not answer (${unreachable}); set BENCH_DATABASE_URL`);
    return undefined;
  }
  const agents = {};
  const cleanups = [];
  try {
    for (const [name, latencyMs] of [
      ["fast", 0],
      ["slow", LATENCY_MS],
    ]) {
      agents[name] = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs });
      cleanups.push(agents[name].stop);
    }
    const scaling = await measureScaling(root, agents, cleanups);
    printScaling(scaling);
    // The scaling clusters are stopped before the failover's start: they would take its CPU.
    const agentCleanups = cleanups.splice(0, 2);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    cleanups.push(...agentCleanups);
    const failover = await measureFailover(root, agents, cleanups);
    printFailover(failover);
    printTargets(scaling, failover);
    return { scaling, failover };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
