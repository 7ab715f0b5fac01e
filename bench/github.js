// `node bench/run.js github`: the GitHub App's webhook route under a steady stream of deliveries.
// Signed pull_request deliveries (each a new delivery id, over a set of commits) arrive at a fixed
// rate; what is measured is the time to the 2xx, against a bare receiver doing the least a correct
// one does (bench/webhook-baseline.js), then that nothing was lost and each commit got one check run.
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import { stringify } from "yaml";
import { LOCAL_SETTINGS, makeApiClient } from "./lib/fixture.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { markdownTable } from "./lib/report.js";

const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 200); // deliveries per second
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 20);
const COMMITS = 20;
const P99_TARGET_MS = 100;
const DRAIN_TIMEOUT_MS = 180_000;
const REPOSITORY = { id: 9_000_001, full_name: "bench/refund-agent", default_branch: "main", installationId: 7 };

const log = (message) => process.stderr.write(`${message}\n`);

export function describeGitHubBench() {
  return `GitHub: ${RATE} signed pull_request deliveries/s for ${SECONDS} s (each a new delivery id, over ${COMMITS} commits), 10 connections; service, then the bare receiver`;
}

/** Sends deliveries at RATE for SECONDS; resolves with every 2xx latency and the count of others. */
async function deliverAtRate(url, secret, makePayload) {
  const latenciesMs = [];
  let other = 0;
  let sent = 0;
  const instance = autocannon({
    url: `${url}/api/github/webhooks`,
    connections: 10,
    overallRate: RATE,
    duration: SECONDS,
    timeout: 10,
    requests: [
      {
        method: "POST",
        setupRequest(request) {
          const body = JSON.stringify(makePayload(sent++));
          return {
            ...request,
            body,
            headers: {
              "content-type": "application/json",
              "x-github-event": "pull_request",
              "x-github-delivery": randomUUID(),
              "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
            },
          };
        },
      },
    ],
  });
  instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
    if (statusCode >= 200 && statusCode < 300) latenciesMs.push(responseTimeMs);
    else other++;
  });
  const result = await instance;
  latenciesMs.sort((a, b) => a - b);
  const percentile = (p) =>
    latenciesMs[Math.min(latenciesMs.length - 1, Math.ceil(p * latenciesMs.length) - 1)] ?? Number.NaN;
  return {
    ok: latenciesMs.length,
    other: other + result.errors + result.timeouts,
    perSecond: latenciesMs.length / result.duration,
    p50: percentile(0.5),
    p99: percentile(0.99),
  };
}

async function waitUntil(condition, what, timeoutMs = DRAIN_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function runGitHubBench({ root }) {
  const { startGitHubStandIn } = await import(join(root, "build/examples/github/stand-in.js"));
  const { pullRequestEvent } = await import(join(root, "build/examples/github/events.js"));
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-github-"));
  const cleanups = [() => rmSync(workdir, { recursive: true, force: true })];
  try {
    const github = await startGitHubStandIn({ checkRequests: false });
    cleanups.push(github.close);
    github.addRepository(REPOSITORY);
    const agent = await startExampleAgent(join(root, "build/examples/agent/main.js"));
    cleanups.push(agent.stop);
    const dbPath = join(workdir, "assure.db");
    log("Starting the service with the GitHub App…");
    const service = await startServer("service", join(root, "build/app/main.js"), {
      ...LOCAL_SETTINGS,
      ASSURE_DB: dbPath,
      LOG_LEVEL: "warn",
      ASSURE_BASE_URL: "http://assure.bench",
      ASSURE_GITHUB_RECONCILE_MS: "500",
      ...github.env,
    });
    cleanups.push(service.stop);
    const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "bench"], {
      ASSURE_DB: dbPath,
    });
    const call = makeApiClient(service.url, token);
    const { json: project } = await call("POST", "/v1/projects", {
      body: { name: "github-bench", repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }] },
    });
    const { json: agentRecord } = await call("POST", "/v1/agents", {
      body: { project_id: project.project_id, name: "refund-agent", version: "1" },
    });
    await call("POST", "/v1/environments", {
      body: {
        project_id: project.project_id,
        name: "staging",
        agent_id: agentRecord.agent_id,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
      },
    });
    const spec = readFileSync(join(root, "examples/refund-agent-deterministic.yaml"), "utf8").replace(
      "repeat: 3",
      "repeat: 1",
    );
    const files = {
      ".assure/config.yml": stringify({
        version: 1,
        project: project.project_id,
        runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }],
      }),
      ".assure/specs/refund.yaml": spec,
    };
    const base = "b".repeat(40);
    const heads = Array.from({ length: COMMITS }, (_, i) => (i + 1).toString(16).padStart(40, "a"));
    for (const sha of [base, ...heads]) github.commit(REPOSITORY.full_name, sha, files);
    const makePayload = (i) =>
      pullRequestEvent(REPOSITORY, {
        action: "synchronize",
        head: heads[i % COMMITS],
        base,
        number: 1 + (i % COMMITS),
      });

    log(`Delivering ${RATE}/s for ${SECONDS} s to the service…`);
    const measured = await deliverAtRate(service.url, github.webhookSecret, makePayload);

    log("Waiting for every delivery to be processed and every check run to complete…");
    const db = new Database(dbPath, { readonly: true });
    cleanups.push(() => db.close());
    const count = (sql) => db.prepare(sql).pluck().get();
    await waitUntil(
      () =>
        count("SELECT COUNT(*) FROM jobs") === 0 &&
        heads.every((sha) => github.currentCheckRun(REPOSITORY.full_name, sha)?.status === "completed"),
      "the deliveries to be processed",
    );
    const stored = count("SELECT COUNT(*) FROM github_deliveries");
    const checkRunsPerCommit = heads.map((sha) => github.checkRuns(REPOSITORY.full_name, sha).length);
    const conclusions = new Set(heads.map((sha) => github.currentCheckRun(REPOSITORY.full_name, sha)?.conclusion));

    const baselineDb = join(workdir, "baseline.db");
    log("Starting the bare receiver…");
    const baselineServer = await startServer("webhook baseline", join(root, "bench/webhook-baseline.js"), {
      ASSURE_DB: baselineDb,
      WEBHOOK_SECRET: github.webhookSecret,
    });
    cleanups.push(baselineServer.stop);
    log(`Delivering ${RATE}/s for ${SECONDS} s to the bare receiver…`);
    const baseline = await deliverAtRate(baselineServer.url, github.webhookSecret, makePayload);

    const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
    console.log(
      markdownTable(
        ["Target", "2xx", "other", "2xx/s", "p50 ms", "p99 ms"],
        [
          [
            "service (webhook route)",
            String(measured.ok),
            String(measured.other),
            fixed(measured.perSecond, 0),
            fixed(measured.p50, 2),
            fixed(measured.p99, 2),
          ],
          [
            "bare receiver",
            String(baseline.ok),
            String(baseline.other),
            fixed(baseline.perSecond, 0),
            fixed(baseline.p50, 2),
            fixed(baseline.p99, 2),
          ],
        ],
      ),
    );
    console.log("");
    const verdict = (ok) => (ok ? "PASS" : "FAIL");
    console.log(
      `${verdict(measured.p99 <= P99_TARGET_MS)}  Webhook route p99 of the 2xx = ${fixed(measured.p99, 2)} ms (target <= ${P99_TARGET_MS}; ${fixed(measured.p99 / baseline.p99, 2)} x the bare receiver's)`,
    );
    // Requests still in flight when the load stops are kept too, but their answers are not counted.
    console.log(
      `${verdict(measured.other === 0 && stored >= measured.ok)}  Deliveries kept: ${stored} of ${measured.ok} answered 2xx (and ${stored - measured.ok} in flight at the end), ${measured.other} not answered 2xx (target: every 2xx kept, none refused)`,
    );
    console.log(
      `${verdict(checkRunsPerCommit.every((n) => n === 1))}  Check runs per commit: ${[...new Set(checkRunsPerCommit)].join(", ")} over ${COMMITS} commits (target: exactly 1), concluded ${[...conclusions].join(", ")}`,
    );
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
