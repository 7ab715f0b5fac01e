// The hostile-input part of `npm run bench` (also alone: `node bench/run.js hostile`): what the
// adversarial review's attacks cost the service, measured from outside (issue "The gate holds").
// 1. Webhook fairness: the lag of deliveries to one healthy endpoint, alone, and beside 200
//    endpoints at hosts that do not resolve (target: p99 within 2x alone).
// 2. A 150 MB body with a bogus signature to the GitHub webhook route, with its Content-Length and
//    chunked: the service's peak RSS growth (target < 30 MB) and /healthz p99 meanwhile (< 100 ms).
// 3. The event loop while large or hostile requests are served: /healthz latency, max and p99,
//    sampled every 10 ms while each is sent (target: no request holds it over 100 ms).
import { generateKeyPairSync } from "node:crypto";
import { createServer, request } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse, stringify } from "yaml";
import { LOCAL_SETTINGS, makeApiClient } from "./lib/fixture.js";
import { runCli, startServer } from "./lib/processes.js";
import { markdownTable } from "./lib/report.js";
import { percentile } from "./lib/statistics.js";

const DEAD_ENDPOINTS = Number(process.env.BENCH_DEAD_ENDPOINTS ?? 200);
const EVENTS = Number(process.env.BENCH_FAIRNESS_EVENTS ?? 100);
const EVENTS_PER_SECOND = 10;
const MB = 1024 * 1024;
export const HOSTILE_TARGETS = { lagRatio: 2, rssGrowthMb: 30, healthP99Ms: 100, eventLoopMs: 100 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const p = (values, fraction) =>
  percentile(
    [...values].sort((a, b) => a - b),
    fraction,
  );

export function describeHostileBench() {
  return (
    `Hostile input: ${EVENTS} release decisions at ${EVENTS_PER_SECOND}/s delivered to one local endpoint alone and beside ${DEAD_ENDPOINTS} endpoints at hosts that do not resolve; ` +
    "a 150 MB unsigned body to the webhook route (Content-Length, then chunked) with the service's RSS sampled every 5 ms; " +
    "/healthz sampled every 10 ms while large and hostile requests are served"
  );
}

async function service(root, name, env = {}) {
  const workdir = mkdtempSync(join(tmpdir(), `assure-bench-${name}-`));
  const dbPath = join(workdir, "assure.db");
  const server = await startServer(name, join(root, "build/app/main.js"), {
    ...LOCAL_SETTINGS,
    ASSURE_DB: dbPath,
    ASSURE_WORKERS: "1",
    LOG_LEVEL: "warn",
    ...env,
  });
  const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", name], {
    ASSURE_DB: dbPath,
  });
  return {
    ...server,
    token,
    call: makeApiClient(server.url, token),
    async close() {
      await server.stop();
      rmSync(workdir, { recursive: true, force: true });
    },
  };
}

/** GET /healthz again and again, one at a time, every `everyMs`, until stopped: each one's latency. */
function probeHealth(url, everyMs = 10) {
  const latencies = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
      latencies.push(performance.now() - started);
      await sleep(everyMs);
    }
  })();
  return { stop: async () => ((running = false), await done, latencies) };
}

/** A receiver that answers 204 and notes each event's lag from when it occurred. */
async function startReceiver() {
  const lags = new Map();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const event = JSON.parse(body);
      if (!lags.has(event.event_id)) lags.set(event.event_id, Date.now() - Date.parse(event.occurred_at));
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    lags,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function waitUntil(condition, what, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(50);
  }
}

/** The lag of EVENTS decisions' events at one healthy endpoint, beside `dead` endpoints that cannot be reached. */
async function deliveryLag(root, dead) {
  const s = await service(root, `fair-${dead}`);
  const receiver = await startReceiver();
  try {
    const project = (await s.call("POST", "/v1/projects", { body: { name: "fairness" } })).json.project_id;
    for (let i = 0; i < dead; i++) {
      await s.call("POST", "/v1/webhooks", {
        body: {
          project_id: project,
          url: `https://dead-${i}.assure-bench.invalid/hook`,
          event_types: ["release_decision.updated"],
        },
      });
    }
    await s.call("POST", "/v1/webhooks", {
      body: { project_id: project, url: receiver.url, event_types: ["release_decision.updated"] },
    });
    let commit = 0;
    const decide = () =>
      s.call("POST", "/v1/release-decisions", {
        body: {
          project_id: project,
          subject: { repository: "acme/bench", commit_sha: (++commit).toString(16).padStart(40, "0") },
          plan: [],
        },
      });
    // Warm: every endpoint tried once, the dead ones known to fail.
    await decide();
    await waitUntil(
      async () => receiver.lags.size === 1 && (await failingCount(s)) === dead,
      "every endpoint tried once",
    );
    receiver.lags.clear();
    for (let i = 0; i < EVENTS; i++) {
      await decide();
      await sleep(1000 / EVENTS_PER_SECOND);
    }
    await waitUntil(() => receiver.lags.size === EVENTS, "every event at the healthy endpoint");
    return [...receiver.lags.values()];
  } finally {
    await receiver.close();
    await s.close();
  }
}

async function failingCount(s) {
  let failing = 0;
  for (let cursor = null; ;) {
    const { json } = await s.call("GET", `/v1/webhooks?limit=200${cursor ? `&cursor=${cursor}` : ""}`);
    failing += json.data.filter((w) => w.failing_since).length;
    if (!json.has_more) return failing;
    cursor = json.next_cursor;
  }
}

/** VmRSS of a process, in MB, sampled every 5 ms until stopped: the peak. */
function sampleRss(pid) {
  const read = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  let peak = read();
  const timer = setInterval(() => (peak = Math.max(peak, read())), 5);
  return { before: peak, stop: () => (clearInterval(timer), peak) };
}

/** Sends `total` bytes to the webhook route (claimed in Content-Length, or chunked), until the service answers and closes. */
function sendHugeBody(url, { total, withLength }) {
  return new Promise((resolve) => {
    let sent = 0;
    let status = 0;
    const req = request(`${url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": "bench-huge",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        ...(withLength ? { "content-length": String(total) } : {}),
      },
    });
    const finish = () => resolve({ status, sent });
    req.on("response", (res) => {
      status = res.statusCode;
      res.resume();
      res.on("end", finish);
    });
    // The service closes the connection once it has answered: a write after that fails, and the answer may still be read.
    req.on("error", () => setTimeout(finish, 200));
    const chunk = Buffer.alloc(256 * 1024, 120);
    const pump = () => {
      while (sent < total && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

async function hugeBodies(root) {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const s = await service(root, "webhook-route", {
    APP_ID: "1",
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET: "bench-secret",
    ASSURE_BASE_URL: "https://assure.example.test",
  });
  try {
    const rows = [];
    for (const withLength of [true, false]) {
      await sleep(500);
      const rss = sampleRss(s.pid);
      const health = probeHealth(s.url);
      const answer = await sendHugeBody(s.url, { total: 150 * MB, withLength });
      await sleep(200);
      const latencies = await health.stop();
      const peak = rss.stop();
      rows.push({
        how: withLength ? "Content-Length: 150 MB" : "chunked, 150 MB",
        status: answer.status,
        sentMb: answer.sent / MB,
        growth: peak - rss.before,
        p99: p(latencies, 0.99),
        max: Math.max(...latencies),
      });
    }
    return rows;
  } finally {
    await s.close();
  }
}

/** Large and hostile requests, each sent while /healthz is probed: how long the event loop was held. */
async function eventLoop(root) {
  const s = await service(root, "event-loop");
  try {
    const project = (await s.call("POST", "/v1/projects", { body: { name: "event-loop" } })).json.project_id;
    const spec = parse(readFileSync(join(root, "examples/refund-agent-deterministic.yaml"), "utf8"));
    spec.defaults.repeat = 1;
    // 9,999 rows and the other scenario: the most conversations a spec takes (10,000).
    spec.scenarios[0].vars = Array.from({ length: 9_999 }, (_, i) => ({
      id: `r${i}`,
      order_id: `A-${i}`,
      note: "x".repeat(300),
    }));
    const tableSpec = readFileSync(join(root, "examples/tables/refunds-table.yaml"), "utf8");
    const file = (content) =>
      JSON.stringify({
        project_id: project,
        file: {
          repository: "acme/bench",
          commit_sha: "1".repeat(40),
          path: ".assure/specs/refunds.yaml",
          content: tableSpec,
          tables: [{ path: ".assure/refunds.csv", content }],
        },
      });
    const cases = [
      ["a 3.5 MB YAML spec (9,999 rows inline)", stringify(spec), "application/yaml", `?project_id=${project}`],
      ["the same spec as JSON", JSON.stringify({ project_id: project, spec }), "application/json", ""],
      [
        "a 4.8 MB CSV table of 1.2 M rows",
        file(`id,order_id,amount\n${",,\n".repeat(1_200_000)}`),
        "application/json",
        "",
      ],
      [
        "a CSV header of 600,000 columns",
        file(`${Array.from({ length: 600_000 }, (_, i) => `c${i % 10}`).join(",")}\n1\n`),
        "application/json",
        "",
      ],
      [
        "JSON nested 2 million deep",
        `{"spec":${"[".repeat(2_000_000)}${"]".repeat(2_000_000)}}`,
        "application/json",
        "",
      ],
      [
        "YAML nested 1 million deep",
        `a: ${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`,
        "application/yaml",
        `?project_id=${project}`,
      ],
    ];
    const rows = [];
    for (const [what, body, contentType, query] of cases) {
      await sleep(300);
      const health = probeHealth(s.url);
      const started = performance.now();
      const response = await fetch(`${s.url}/v1/test-specs${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.token}`, "content-type": contentType },
        body,
      });
      await response.arrayBuffer();
      const took = performance.now() - started;
      await sleep(100);
      const latencies = await health.stop();
      rows.push({ what, status: response.status, took, max: Math.max(...latencies), p99: p(latencies, 0.99) });
    }
    return rows;
  } finally {
    await s.close();
  }
}

export async function runHostileBench({ root }) {
  log(`Hostile input: delivery lag to one endpoint alone…`);
  const alone = await deliveryLag(root, 0);
  log(`Hostile input: delivery lag beside ${DEAD_ENDPOINTS} dead endpoints…`);
  const crowded = await deliveryLag(root, DEAD_ENDPOINTS);
  log("Hostile input: 150 MB bodies to the webhook route…");
  const huge = await hugeBodies(root);
  log("Hostile input: the event loop under large and hostile requests…");
  const loop = await eventLoop(root);

  console.log("\nHostile input:\n");
  const ratio = p(crowded, 0.99) / p(alone, 0.99);
  console.log(
    markdownTable(
      ["Healthy endpoint", "Events", "Lag p50 (ms)", "Lag p99 (ms)"],
      [
        ["alone", String(alone.length), fixed(p(alone, 0.5), 0), fixed(p(alone, 0.99), 0)],
        [
          `beside ${DEAD_ENDPOINTS} dead endpoints`,
          String(crowded.length),
          fixed(p(crowded, 0.5), 0),
          fixed(p(crowded, 0.99), 0),
        ],
      ],
    ),
  );
  console.log("");
  console.log(
    markdownTable(
      [
        "Unsigned body to the webhook route",
        "Answer",
        "Sent before it (MB)",
        "Peak RSS growth (MB)",
        "/healthz p99 (ms)",
        "/healthz max (ms)",
      ],
      huge.map((r) => [
        r.how,
        r.status ? String(r.status) : "closed",
        fixed(r.sentMb, 1),
        fixed(r.growth, 1),
        fixed(r.p99, 1),
        fixed(r.max, 1),
      ]),
    ),
  );
  console.log("");
  console.log(
    markdownTable(
      ["Request (POST /v1/test-specs)", "Answer", "Took (ms)", "/healthz max (ms)", "/healthz p99 (ms)"],
      loop.map((r) => [r.what, String(r.status), fixed(r.took, 0), fixed(r.max, 1), fixed(r.p99, 1)]),
    ),
  );
  console.log("");
  const verdict = (ok) => (ok ? "PASS" : "FAIL");
  console.log(
    `${verdict(ratio <= HOSTILE_TARGETS.lagRatio)}  delivery lag p99 beside ${DEAD_ENDPOINTS} dead endpoints: ${fixed(ratio, 2)} x alone (target <= ${HOSTILE_TARGETS.lagRatio})`,
  );
  const growth = Math.max(...huge.map((r) => r.growth));
  const healthP99 = Math.max(...huge.map((r) => r.p99));
  console.log(
    `${verdict(growth < HOSTILE_TARGETS.rssGrowthMb)}  peak RSS growth while a 150 MB unsigned body is refused: ${fixed(growth, 1)} MB (target < ${HOSTILE_TARGETS.rssGrowthMb})`,
  );
  console.log(
    `${verdict(healthP99 < HOSTILE_TARGETS.healthP99Ms)}  /healthz p99 meanwhile: ${fixed(healthP99, 1)} ms (target < ${HOSTILE_TARGETS.healthP99Ms})`,
  );
  const held = Math.max(...loop.map((r) => r.max));
  console.log(
    `${verdict(held < HOSTILE_TARGETS.eventLoopMs)}  the longest /healthz wait while large or hostile requests were served: ${fixed(held, 0)} ms (target < ${HOSTILE_TARGETS.eventLoopMs})`,
  );
}
