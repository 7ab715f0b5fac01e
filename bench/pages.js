// The evidence pages part of `npm run bench` (also alone: `node bench/run.js pages`).
// What a reviewer waits for: the time to first byte (and to the last) of a run's page, for a
// 10,000-conversation run (its first and last pages of conversations, and a link into the middle
// of it), beside a typical run's page (the example spec: 8 conversations), measured in the same
// run on the same service. The runs are real: held by the engine against the example agent.
// See docs/benchmarks.md, "Evidence pages".
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchSpec } from "./engine.js";
import { LOCAL_SETTINGS, createBenchProject, makeApiClient, runToEnd } from "./lib/fixture.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { markdownTable } from "./lib/report.js";

const BIG_RUN = Number(process.env.BENCH_PAGES_CONVERSATIONS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_PAGES_SAMPLES ?? 30);
const WARMUP = 3;
export const PAGES_TARGET_MS = 1000;

const log = (message) => process.stderr.write(`${message}\n`);
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};

/** Sequential GETs of a page: each one's time to the response's headers (first byte) and to its last byte. */
async function measurePage(url) {
  const ttfb = [];
  const total = [];
  let bytes = 0;
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const started = performance.now();
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    const first = performance.now() - started;
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    if (i < WARMUP) continue;
    ttfb.push(first);
    total.push(performance.now() - started);
    bytes = Buffer.byteLength(body);
  }
  return {
    ttfbP50: percentile(ttfb, 0.5),
    ttfbP95: percentile(ttfb, 0.95),
    totalP50: percentile(total, 0.5),
    kb: bytes / 1024,
  };
}

export function describePagesBench() {
  return (
    `Evidence pages: a run of ${BIG_RUN.toLocaleString("en")} single-turn conversations and a typical run (the example spec, 8 conversations), held by the engine; ` +
    `${SAMPLES} sequential GETs per page after ${WARMUP} warm-up, time to first byte and to the last`
  );
}

/** Runs the pages bench and prints its table and target lines to stdout. */
export async function runPagesBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-pages-"));
  const dbPath = join(workdir, "assure.db");
  let agent;
  let service;
  try {
    agent = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs: 0 });
    service = await startServer("service", join(root, "build/app/main.js"), {
      ...LOCAL_SETTINGS,
      ASSURE_DB: dbPath,
      ASSURE_WORKERS: "1",
      ASSURE_MAX_CONVERSATIONS: "64",
      LOG_LEVEL: "warn",
    });
    const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "bench-pages"], {
      ASSURE_DB: dbPath,
    });
    const call = makeApiClient(service.url, token);
    const { project, environments } = await createBenchProject(call, "bench-pages", { staging: agent.baseUrl });
    const environment = environments.staging;
    const register = async (body, contentType) =>
      (await call("POST", `/v1/test-specs?project_id=${project}`, { body, contentType })).json.test_spec_id;
    const typicalSpec = await register(
      readFileSync(join(root, "examples/refund-agent.yaml"), "utf8"),
      "application/yaml",
    );
    const bigSpec = await register({ project_id: project, spec: benchSpec(BIG_RUN, 64) });

    log("Pages: holding a typical run…");
    const typical = await runToEnd(call, { test_spec_id: typicalSpec, environment_id: environment }, "typical");
    log(`Pages: holding a run of ${BIG_RUN.toLocaleString("en")} conversations…`);
    const big = await runToEnd(call, { test_spec_id: bigSpec, environment_id: environment }, "big");
    const link = (run) => `${service.url}${run.links.html}`;
    const { json: conversations } = await call("GET", `/v1/runs/${big.run_id}/conversations?limit=200`);
    const middle = conversations.data.at(-1).conversation_id; // the 200th: on the second page of 100
    const lastPage = Math.ceil(BIG_RUN / 100);

    const cases = [
      { name: `typical run (${typical.status}), the whole page`, url: link(typical), baseline: true },
      { name: `${BIG_RUN.toLocaleString("en")}-conversation run, conversations 1–100`, url: link(big) },
      {
        name: `${BIG_RUN.toLocaleString("en")}-conversation run, the last page (${lastPage})`,
        url: `${link(big)}&page=${lastPage}`,
      },
      {
        name: `${BIG_RUN.toLocaleString("en")}-conversation run, a link to conversation 200 (find=)`,
        url: `${link(big)}&find=conversation-${middle}`,
      },
    ];
    const results = [];
    for (const benchCase of cases) {
      log(`Pages: measuring ${benchCase.name}…`);
      results.push({ ...benchCase, ...(await measurePage(benchCase.url)) });
    }
    const baseline = results.find((r) => r.baseline);
    console.log("\nEvidence pages (sequential GETs; p50 and p95 over the samples):\n");
    console.log(
      markdownTable(
        ["Page", "TTFB p50 (ms)", "TTFB p95 (ms)", "Last byte p50 (ms)", "Size (KB)", "TTFB p50 vs typical"],
        results.map((r) => [
          r.name,
          fixed(r.ttfbP50, 1),
          fixed(r.ttfbP95, 1),
          fixed(r.totalP50, 1),
          fixed(r.kb, 0),
          r.baseline ? "1.00 (baseline)" : `${fixed(r.ttfbP50 / baseline.ttfbP50, 2)} x`,
        ]),
      ),
    );
    console.log("");
    for (const r of results.filter((result) => !result.baseline)) {
      console.log(
        `${r.ttfbP95 < PAGES_TARGET_MS ? "PASS" : "FAIL"}  ${r.name}: TTFB p95 ${fixed(r.ttfbP95, 1)} ms (target < ${PAGES_TARGET_MS})`,
      );
    }
    return results;
  } catch (error) {
    if (service) log(`--- last output of the service ---\n${service.output()}`);
    throw error;
  } finally {
    await service?.stop();
    await agent?.stop();
    rmSync(workdir, { recursive: true, force: true });
  }
}
