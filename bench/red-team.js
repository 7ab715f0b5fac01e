// The red-team part of `npm run bench` (also alone: `node bench/run.js red-team`): one run of both
// OWASP presets of the security library (examples/refund-agent-red-team.yaml: owasp-llm-2025 and
// owasp-agentic-2026 expanded at upload, about 320 probes) at the spec's concurrency 16 against the
// example agent answering after 50 ms, in its vulnerable mode and in its hardened one: the wall
// time of the run (target < 60 s), the probes, the findings, and the probes left undecided. See
// docs/benchmarks.md, "Red team".
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { LOCAL_SETTINGS, makeApiClient, runToEnd } from "./lib/fixture.js";
import { runCli, startExampleAgent, startServer } from "./lib/processes.js";
import { markdownTable } from "./lib/report.js";
import { median } from "./lib/statistics.js";

const LATENCY_MS = Number(process.env.BENCH_RED_TEAM_LATENCY_MS ?? 50);
const ROUNDS = Number(process.env.BENCH_RED_TEAM_ROUNDS ?? 3);
const MODES = ["refund-agent+vulnerable", "refund-agent+hardened"];
export const RED_TEAM_TARGETS = { seconds: 60 };

const log = (message) => process.stderr.write(`${message}\n`);

export function describeRedTeamBench() {
  return (
    `Red team: both OWASP presets (examples/refund-agent-red-team.yaml) at concurrency 16 against the example agent ` +
    `answering after ${LATENCY_MS} ms, vulnerable and hardened, ${ROUNDS} runs each (median)`
  );
}

/** The probe evaluations of a run left inconclusive: attacks that never reached the agent, or could not be judged. */
async function countUndecided(call, runId) {
  let count = 0;
  let cursor = null;
  do {
    const page = (
      await call(
        "GET",
        `/v1/runs/${runId}/evaluations?kind=probe&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      )
    ).json;
    count += page.data.filter((evaluation) => evaluation.status === "inconclusive").length;
    cursor = page.next_cursor;
  } while (cursor);
  return count;
}

async function measure(root, workdir) {
  const dbPath = join(workdir, "red-team.db");
  const service = await startServer("service", join(root, "build/app/main.js"), {
    ...LOCAL_SETTINGS,
    ASSURE_DB: dbPath,
    ASSURE_WORKERS: "1",
    LOG_LEVEL: "warn",
  });
  const agent = await startExampleAgent(join(root, "build/examples/agent/main.js"), { latencyMs: LATENCY_MS });
  try {
    const { token } = runCli(join(root, "build/app/cli.js"), ["keys", "create", "--admin", "--name", "red-team"], {
      ASSURE_DB: dbPath,
    });
    const call = makeApiClient(service.url, token, { timeoutMs: 60_000 });
    const project = (await call("POST", "/v1/projects", { body: { name: "bench-red-team" } })).json.project_id;
    const agentId = (
      await call("POST", "/v1/agents", { body: { project_id: project, name: "refund-agent", version: "1.0.0" } })
    ).json.agent_id;
    const written = parse(readFileSync(join(root, "examples/refund-agent-red-team.yaml"), "utf8"));
    const spec = (await call("POST", "/v1/test-specs", { body: { project_id: project, spec: written } })).json;
    const results = [];
    for (const model of MODES) {
      const environment = (
        await call("POST", "/v1/environments", {
          body: {
            project_id: project,
            name: model.replace("+", "-"),
            agent_id: agentId,
            endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model, max_concurrency: 64 },
          },
        })
      ).json.environment_id;
      const rounds = [];
      for (let round = 0; round < ROUNDS; round++) {
        const body = { test_spec_id: spec.test_spec_id, environment_id: environment };
        const run = await runToEnd(call, body, `red-team-${model}-${round}`);
        const evidence = (await call("GET", `/v1/runs/${run.run_id}/evidence`)).json;
        const undecided = await countUndecided(call, run.run_id);
        rounds.push({
          status: run.status,
          seconds: (Date.parse(run.ended_at) - Date.parse(run.started_at)) / 1000,
          findings: evidence.findings.length,
          deterministic: evidence.findings.filter((finding) => finding.detection === "deterministic").length,
          undecided,
        });
        log(`red team ${model}, run ${round + 1}: ${JSON.stringify(rounds.at(-1))}`);
      }
      results.push({ model, probes: spec.spec.security.length, rounds });
    }
    return results;
  } catch (error) {
    log(`--- last output of the service ---\n${service.output()}`);
    throw error;
  } finally {
    await agent.stop();
    await service.stop();
  }
}

export async function runRedTeamBench({ root }) {
  const workdir = mkdtempSync(join(tmpdir(), "assure-bench-red-team-"));
  try {
    const results = await measure(root, workdir);
    const rows = results.map(({ model, probes, rounds }) => {
      const seconds = median(rounds.map((round) => round.seconds));
      return [
        model,
        String(probes),
        String(rounds[0].findings),
        String(rounds[0].deterministic),
        String(rounds[0].undecided),
        rounds.map((round) => round.seconds.toFixed(1)).join(" / "),
        seconds.toFixed(1),
        seconds < RED_TEAM_TARGETS.seconds && rounds.every((round) => round.status === "COMPLETED") ? "PASS" : "FAIL",
      ];
    });
    console.log(
      markdownTable(
        [
          "agent",
          "probes",
          "findings",
          "deterministic",
          "undecided",
          "runs (s)",
          "median (s)",
          `< ${RED_TEAM_TARGETS.seconds} s`,
        ],
        rows,
      ),
    );
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}
