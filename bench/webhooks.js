// The webhooks part of `npm run bench` (also alone: `node bench/run.js webhooks`).
// Delivery throughput: a run's ~10,000 events sent to 4 receivers (40,000 deliveries), queued at
// once (POST …/recover), events delivered per second and the lag from the commit that queued them
// to their arrival (p50/p99); the live lag of a run's events while it is held (an agent answering
// in 200 ms, concurrency 16: events at a run's pace); and the API's
// throughput (GET /v1/runs/{id}/evidence) while the deliverer works, against the same API idle,
// measured in the same run. See docs/benchmarks.md, "Webhook delivery".
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { benchSpec } from "./engine.js";
import { LOCAL_SETTINGS, createBenchProject, makeApiClient, runToEnd } from "./lib/fixture.js";
import { runLoad } from "./lib/load.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { markdownTable } from "./lib/report.js";

const CASES = Number(process.env.BENCH_WEBHOOK_CASES ?? 2000);
const LIVE_CASES = Number(process.env.BENCH_WEBHOOK_LIVE_CASES ?? 200);
/** The live run's agent answers as a model would, so its events come at a run's pace. */
const LIVE_LATENCY_MS = 200;
const RECEIVERS = 4;
const LOAD_SECONDS = 4;
/** "The API's throughput unchanged within noise while delivering": within 10%. */
export const WEBHOOK_TARGETS = { apiRatio: 0.9 };

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};

/** A receiver that answers 204 at once and notes when each event first arrived. */
async function startReceiver() {
  const firstSeen = new Map();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const id = req.headers["webhook-id"];
    if (!firstSeen.has(id)) firstSeen.set(id, Date.now());
    req.resume();
    req.on("end", () => res.writeHead(204).end());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    firstSeen,
    get requests() {
      return requests;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function traceOf(call, runId) {
  const events = [];
  for (let after = 0; ;) {
    const { json } = await call("GET", `/v1/runs/${runId}/trace?limit=200&after=${after}`);
    events.push(...json.data);
    if (!json.has_more) return events;
    after = json.data.at(-1).sequence;
  }
}

async function waitUntil(condition, what, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(20);
  }
}

export function describeWebhookBench() {
  return (
    `Webhooks: a run of ${CASES} single-turn cases (its trace's events) sent to ${RECEIVERS} local receivers answering 204 at once, ` +
    `queued at once by POST …/recover; a run of ${LIVE_CASES} cases (agent ${LIVE_LATENCY_MS} ms, concurrency 16) delivered live; ` +
    `GET /v1/runs/{id}/evidence under autocannon for ${LOAD_SECONDS} s idle and while delivering`
  );
}

export async function runWebhookBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-webhooks-"));
  const dbPath = join(workdir, "assure.db");
  const receivers = [];
  let agent;
  let slowAgent;
  let service;
  try {
    agent = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs: 0 });
    slowAgent = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs: LIVE_LATENCY_MS });
    service = await startServer("service", join(root, "build/app/main.js"), {
      ...LOCAL_SETTINGS,
      ASSURE_DB: dbPath,
      ASSURE_WORKERS: "1",
      ASSURE_MAX_CONVERSATIONS: "64",
      LOG_LEVEL: "warn",
    });
    const { token } = runCli(
      join(root, "build/app/cli.js"),
      ["keys", "create", "--admin", "--name", "bench-webhooks"],
      { ASSURE_DB: dbPath },
    );
    const call = makeApiClient(service.url, token);
    const { project, environments } = await createBenchProject(call, "bench-webhooks", {
      staging: agent.baseUrl,
      live: slowAgent.baseUrl,
    });
    const { staging: environment, live: liveEnvironment } = environments;
    const spec = async (cases, concurrency) =>
      (await call("POST", "/v1/test-specs", { body: { project_id: project, spec: benchSpec(cases, concurrency) } }))
        .json.test_spec_id;

    log(`Webhooks: holding a run of ${CASES} cases, no endpoint yet…`);
    const since = new Date().toISOString();
    const run = await runToEnd(
      call,
      { test_spec_id: await spec(CASES, 64), environment_id: environment },
      "bench-webhooks",
    );
    const events = await traceOf(call, run.run_id);
    const load = {
      name: "evidence",
      method: "GET",
      path: `/v1/runs/${run.run_id}/evidence`,
      headers: { authorization: `Bearer ${token}` },
      body: undefined,
      expectStatus: 200,
    };
    await runLoad(service.url, load, 1); // warm-up
    log("Webhooks: the API, idle…");
    const idle = await runLoad(service.url, load, LOAD_SECONDS);

    for (let i = 0; i < RECEIVERS; i++) receivers.push(await startReceiver());
    const webhooks = [];
    for (const receiver of receivers) {
      webhooks.push(
        (await call("POST", "/v1/webhooks", { body: { project_id: project, url: receiver.url } })).json.webhook_id,
      );
    }
    log(`Webhooks: ${events.length} events × ${RECEIVERS} receivers queued at once, the API under load meanwhile…`);
    const queuedAt = Date.now();
    for (const id of webhooks) await call("POST", `/v1/webhooks/${id}/recover`, { body: { since } });
    const busy = await runLoad(service.url, load, LOAD_SECONDS);
    const loadEndedAt = Date.now();
    const ids = events.map((e) => e.event_id);
    await waitUntil(
      () => receivers.every((r) => ids.every((id) => r.firstSeen.has(id))),
      "every event at every receiver",
    );
    const lags = receivers.flatMap((r) => ids.map((id) => r.firstSeen.get(id) - queuedAt));
    const burstSeconds = Math.max(...lags) / 1000;

    log(`Webhooks: a run of ${LIVE_CASES} cases delivered live…`);
    const live = await runToEnd(
      call,
      { test_spec_id: await spec(LIVE_CASES, 16), environment_id: liveEnvironment },
      "bench-webhooks-live",
    );
    const liveEvents = await traceOf(call, live.run_id);
    await waitUntil(
      () => receivers.every((r) => liveEvents.every((e) => r.firstSeen.has(e.event_id))),
      "every live event at every receiver",
    );
    const liveLags = receivers.flatMap((r) =>
      liveEvents.map((e) => r.firstSeen.get(e.event_id) - Date.parse(e.occurred_at)),
    );

    const apiRatio = busy.latenciesMs.length / busy.seconds / (idle.latenciesMs.length / idle.seconds);
    console.log("\nWebhook delivery:\n");
    console.log(
      markdownTable(
        ["What", "Events", "Deliveries", "Deliveries/s", "Lag p50 (ms)", "Lag p99 (ms)"],
        [
          [
            "burst (recover)",
            String(events.length),
            String(events.length * RECEIVERS),
            fixed((events.length * RECEIVERS) / burstSeconds, 0),
            fixed(percentile(lags, 0.5), 0),
            fixed(percentile(lags, 0.99), 0),
          ],
          [
            "live (a run held)",
            String(liveEvents.length),
            String(liveEvents.length * RECEIVERS),
            "—",
            fixed(percentile(liveLags, 0.5), 0),
            fixed(percentile(liveLags, 0.99), 0),
          ],
        ],
      ),
    );
    console.log("");
    console.log(
      markdownTable(
        ["GET /v1/runs/{id}/evidence", "Requests/s", "p50 (ms)", "p99 (ms)"],
        [
          [
            "idle",
            fixed(idle.latenciesMs.length / idle.seconds, 0),
            fixed(percentile(idle.latenciesMs, 0.5), 2),
            fixed(percentile(idle.latenciesMs, 0.99), 2),
          ],
          [
            "while delivering",
            fixed(busy.latenciesMs.length / busy.seconds, 0),
            fixed(percentile(busy.latenciesMs, 0.5), 2),
            fixed(percentile(busy.latenciesMs, 0.99), 2),
          ],
        ],
      ),
    );
    console.log("");
    const duringLoad = lags.filter((lag) => lag <= loadEndedAt - queuedAt).length;
    console.log(
      `INFO  delivered while the API was under load: ${duringLoad} in ${fixed((loadEndedAt - queuedAt) / 1000, 1)} s (${fixed(duringLoad / ((loadEndedAt - queuedAt) / 1000), 0)}/s; ASSURE_WEBHOOK_RATE_UNDER_LOAD, default 250)`,
    );
    const extra = receivers.reduce((sum, r) => sum + r.requests, 0) - (events.length + liveEvents.length) * RECEIVERS;
    console.log(
      `${apiRatio >= WEBHOOK_TARGETS.apiRatio ? "PASS" : "FAIL"}  API throughput while delivering: ${fixed(apiRatio, 2)} x idle (target >= ${WEBHOOK_TARGETS.apiRatio})`,
    );
    console.log(
      `INFO  live lag from an event to its delivery: p50 ${fixed(percentile(liveLags, 0.5), 0)} ms, p99 ${fixed(percentile(liveLags, 0.99), 0)} ms; burst: ${fixed((events.length * RECEIVERS) / burstSeconds, 0)} deliveries/s`,
    );
    console.log(`INFO  every event reached every receiver; ${extra} duplicate request(s)`);
  } catch (error) {
    if (service) log(`--- last output of the service ---\n${service.output()}`);
    throw error;
  } finally {
    await service?.stop();
    await agent?.stop();
    await slowAgent?.stop();
    for (const receiver of receivers) await receiver.close();
    rmSync(workdir, { recursive: true, force: true });
  }
}
