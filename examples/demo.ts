/**
 * `npm run demo`: the whole loop as a user would run it. Starts the service on its embedded
 * SQLite and the example agent, sets up a project through the API, runs the example specs,
 * shows progress, and prints the verdict, the gates and how to read the evidence. A deployed-style
 * agent too: the example http agent, which runs its own tools and exports its OpenTelemetry spans
 * to the service (a key with traces:write), judged by the deterministic spec from its spans. Then the
 * release gate: a pull request announced to the GitHub App (against a local stand-in of GitHub's
 * API, never GitHub itself), and the release decision and check run the App publishes.
 * Exits non-zero if anything did not go as it should.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { readServiceNodeArgs } from "../app/service-node-args.js";
import { startExampleHttpAgent, type ExampleHttpAgent } from "./agent/http-agent.js";
import { startExampleAgent } from "./agent/server.js";
import { pullRequestEvent } from "./github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "./github/stand-in.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const DB = join(ROOT, "data", "demo", "assure.db");
const TERMINAL = new Set(["COMPLETED", "INCONCLUSIVE", "FAILED"]);

const say = (line = "") => console.log(line);

/** The public address the demo's links use: where `npm start` serves, as the closing lines say. */
const PUBLIC_BASE_URL = "http://localhost:3000";
const REPOSITORY = { id: 1_000_001, full_name: "acme/refund-agent", default_branch: "main", installationId: 1 };

async function startService(github: GitHubStandIn): Promise<{ child: ChildProcess; api: string }> {
  // The App's settings point at the local stand-in: the demo never talks to GitHub.
  const child = spawn(process.execPath, [...readServiceNodeArgs(ROOT), join(ROOT, "build/app/main.js")], {
    env: {
      ...process.env,
      ...github.env,
      ASSURE_BASE_URL: PUBLIC_BASE_URL,
      ASSURE_GITHUB_RECONCILE_MS: "200",
      ASSURE_DB: DB,
      PORT: process.env.PORT ?? "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      // The example agent listens on this machine, which egress leaves closed unless told.
      ASSURE_EGRESS_ALLOWLIST: process.env.ASSURE_EGRESS_ALLOWLIST ?? "127.0.0.1,::1,localhost",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const port = /listening on http:\/\/[^:]+:(\d+)/.exec(buffered)?.[1] ?? /"port":(\d+)/.exec(buffered)?.[1];
      if (port) resolve(Number(port));
    });
    child.once("exit", (code) => reject(new Error(`the service exited with ${code}`)));
  });
  return { child, api: `http://127.0.0.1:${port}` };
}

/** `assure keys create …` on the demo's database: the new key's token. */
function createKey(...args: string[]): string {
  const result = spawnSync(process.execPath, [join(ROOT, "build/app/cli.js"), "keys", "create", ...args], {
    env: { ...process.env, ASSURE_DB: DB },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`assure keys create failed: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { token: string }).token;
}

function client(api: string, token: string) {
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const isText = typeof body === "string";
    const response = await fetch(`${api}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": isText ? "application/yaml" : "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : isText ? body : JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(json.error)}`);
    return json;
  };
}

/** A run's whole trace, page after page. */
async function readTrace(call: ReturnType<typeof client>, runId: string) {
  const events: { type: string; data: { source?: { kind: string }; spans?: number } }[] = [];
  for (let page = await call("GET", `/v1/runs/${runId}/trace?limit=200`); ;) {
    events.push(...page.data);
    if (!page.next_cursor) return events;
    page = await call("GET", `/v1/runs/${runId}/trace?limit=200&cursor=${page.next_cursor}`);
  }
}

async function main(): Promise<number> {
  rmSync(dirname(DB), { recursive: true, force: true });
  const agent = await startExampleAgent();
  const github = await startGitHubStandIn();
  const { child, api } = await startService(github);
  let deployed: ExampleHttpAgent | undefined;
  try {
    const token = createKey("--admin", "--name", "demo");
    const call = client(api, token);
    say(`assure is serving ${api} on SQLite at ${relative(process.cwd(), DB)}`);
    say(`example agent (OpenAI-compatible) at ${agent.baseUrl}`);
    say();

    const project = await call("POST", "/v1/projects", {
      name: "refunds-demo",
      repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
    });
    const agentRecord = await call("POST", "/v1/agents", {
      project_id: project.project_id,
      name: "refund-agent",
      version: "1.0.0",
    });
    const environment = await call("POST", "/v1/environments", {
      project_id: project.project_id,
      name: "local",
      agent_id: agentRecord.agent_id,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
    });
    say(
      `project ${project.project_id}, agent ${agentRecord.agent_id} v1.0.0, environment ${environment.environment_id}`,
    );

    // The same assistant deployed behind its own JSON API: it runs its tools itself and exports its
    // spans to the service (OTEL_EXPORTER_OTLP_ENDPOINT={service}/otlp, a key that may only write traces).
    const tracesKey = createKey("--project", project.project_id, "--scopes", "traces:write", "--name", "agent-traces");
    deployed = await startExampleHttpAgent({
      traces: { endpoint: `${api}/otlp`, headers: { authorization: `Bearer ${tracesKey}` } },
    });
    const deployedEnvironment = await call("POST", "/v1/environments", {
      project_id: project.project_id,
      name: "deployed",
      agent_id: agentRecord.agent_id,
      endpoint: {
        protocol: "http",
        base_url: deployed.baseUrl,
        request: { path: "/chat", body: { session: "{{session_id}}", text: "{{message}}" } },
        response: { text: "reply", session_id: "session" },
      },
    });
    say(
      `example http agent (runs its own tools, exports OpenTelemetry spans to ${api}/otlp) at ${deployed.baseUrl}: environment ${deployedEnvironment.environment_id}`,
    );

    const judge = process.env.ASSURE_JUDGE_BASE_URL && process.env.ASSURE_JUDGE_MODEL;
    say(
      judge
        ? `LLM judge: ${process.env.ASSURE_JUDGE_MODEL} at ${process.env.ASSURE_JUDGE_BASE_URL}`
        : "No LLM judge configured (ASSURE_JUDGE_BASE_URL, ASSURE_JUDGE_MODEL): the TASK gate needs one and will be\n" +
            "inconclusive; the deterministic and security parts run in full.",
    );

    let ok = true;
    const runs: { file: string; label: string; run_id: string; page: string }[] = [];
    const plans = [
      { file: "examples/refund-agent-deterministic.yaml", environment, label: "", expected: ["PASS"] },
      { file: "examples/refund-agent.yaml", environment, label: "", expected: judge ? ["PASS"] : ["INCONCLUSIVE"] },
      {
        file: "examples/refund-agent-deterministic.yaml",
        environment: deployedEnvironment,
        label: "the http agent, its tool calls from its traces",
        expected: ["PASS"],
      },
    ];
    for (const { file, environment: target, label, expected } of plans) {
      const spec = await call(
        "POST",
        `/v1/test-specs?project_id=${project.project_id}`,
        readFileSync(join(ROOT, file), "utf8"),
      );
      const run = await call(
        "POST",
        "/v1/runs",
        { test_spec_id: spec.test_spec_id, environment_id: target.environment_id },
        { "idempotency-key": `demo/${target.name}/${spec.spec_version}` },
      );
      say();
      say(
        `▶ ${file}${label ? `, ${label}` : ""} (spec ${spec.name}, ${spec.spec_version.slice(0, 19)}…): run ${run.run_id}`,
      );
      let last = "";
      let current = run;
      while (!TERMINAL.has(current.status)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        current = await call("GET", `/v1/runs/${run.run_id}`);
        const conversations = await call("GET", `/v1/runs/${run.run_id}/conversations?limit=200`);
        const done = conversations.data.filter((c: { status: string }) => c.status === "completed").length;
        const line = `  ${current.status.padEnd(10)} ${done} conversation(s) completed`;
        if (line !== last) say(line);
        last = line;
      }
      const evidence = await call("GET", `/v1/runs/${run.run_id}/evidence`);
      say(
        `  verdict ${evidence.verdict}${evidence.failure ? ` (${evidence.failure.cause}: ${evidence.failure.message})` : ""}`,
      );
      for (const gate of evidence.gates) say(`    ${gate.gate_id.padEnd(5)} ${gate.status.padEnd(12)} ${gate.reason}`);
      say(
        `    evaluations: ${evidence.evaluations.passed} passed, ${evidence.evaluations.failed} failed of ${evidence.evaluations.total}`,
      );
      say(
        `    findings: ${evidence.findings.length === 0 ? "none" : evidence.findings.map((f: { severity: string; title: string }) => `${f.severity} ${f.title}`).join("; ")}`,
      );
      if (target === deployedEnvironment) {
        const trace = await readTrace(call, run.run_id);
        const fromSpans = trace.filter((e) => e.type === "tool.called" && e.data.source?.kind === "trace").length;
        const spans = trace
          .filter((e) => e.type === "trace.received")
          .reduce((sum, e) => sum + Number(e.data.spans), 0);
        say(`    tool calls read from the agent's spans: ${fromSpans} (${spans} spans received)`);
        if (fromSpans === 0) ok = false;
      }
      if (!expected.includes(evidence.verdict)) ok = false;
      runs.push({
        file,
        label,
        run_id: run.run_id,
        page: (await call("GET", `/v1/runs/${run.run_id}`)).links.html,
      });
    }

    const gate = await releaseGate(api, call, github, project.project_id, environment.name);
    ok &&= gate.ok;

    say();
    say("Read the evidence: start the service on the demo's database,");
    say(`  ASSURE_DB=${relative(process.cwd(), DB)} npm start`);
    say("then open each run's page in a browser (signed links: no key needed, valid for 30 days),");
    for (const { file, label, page } of runs) {
      say(`  ${PUBLIC_BASE_URL}${page}   (${file}${label ? `, ${label}` : ""})`);
    }
    if (gate.decisionPage) say(`  ${PUBLIC_BASE_URL}${gate.decisionPage}   (the release decision)`);
    say("or ask the API:");
    say(`  export ASSURE_TOKEN=${token}`);
    for (const { run_id } of runs) {
      say(`  curl -s -H "Authorization: Bearer $ASSURE_TOKEN" http://localhost:3000/v1/runs/${run_id}/evidence`);
    }
    say(
      `  curl -s -H "Authorization: Bearer $ASSURE_TOKEN" "http://localhost:3000/v1/runs/${runs[0]!.run_id}/trace?limit=20"`,
    );
    say(
      `  curl -s -H "Authorization: Bearer $ASSURE_TOKEN" http://localhost:3000/v1/runs/${runs[0]!.run_id}/conversations`,
    );
    if (gate.decisionPath) {
      say(`  curl -s -H "Authorization: Bearer $ASSURE_TOKEN" http://localhost:3000${gate.decisionPath}`);
    }
    say();
    say(
      ok
        ? `Demo finished: the example agent passes its deterministic and security gates${judge ? " and the judged task gate" : ""}, behind Chat Completions and deployed with its own tools and traces.`
        : "Demo FAILED: a verdict was not what the example agent should get.",
    );
    return ok ? 0 : 1;
  } finally {
    child.kill("SIGTERM");
    await deployed?.close();
    await agent.close();
    await github.close();
  }
}

/**
 * A pull request that changes the agent's spec, announced to the App as GitHub would (a signed
 * `pull_request` webhook): the App reads `.assure/config.yml` at the head commit, registers the
 * spec, makes the commit's release decision, starts its run, and publishes a check run.
 */
async function releaseGate(
  api: string,
  call: ReturnType<typeof client>,
  github: GitHubStandIn,
  projectId: string,
  environment: string,
): Promise<{ ok: boolean; decisionPath?: string; decisionPage?: string }> {
  say();
  say(
    `▶ The release gate: pull request #7 on ${REPOSITORY.full_name}, announced to the GitHub App (a local stand-in of GitHub's API)`,
  );
  github.addRepository(REPOSITORY);
  const files = {
    ".assure/config.yml": `version: 1\nproject: ${projectId}\nruns:\n  - specs: [".assure/specs/*.yaml"]\n    environments: [${environment}]\n`,
    ".assure/specs/refund-agent.yaml": readFileSync(join(ROOT, "examples/refund-agent-deterministic.yaml"), "utf8"),
  };
  const [base, head] = ["a".repeat(40), "f00d".repeat(10)];
  github.commit(REPOSITORY.full_name, base, files);
  github.commit(REPOSITORY.full_name, head, files);
  const delivered = await github.deliver(api, "pull_request", pullRequestEvent(REPOSITORY, { head, base, number: 7 }));
  say(`  webhook pull_request.opened → ${delivered.status}`);
  let checkRun = github.currentCheckRun(REPOSITORY.full_name, head);
  const deadline = Date.now() + 60_000;
  let last = "";
  while (checkRun?.status !== "completed" && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    checkRun = github.currentCheckRun(REPOSITORY.full_name, head);
    const line = checkRun ? `  check run ${checkRun.name}: ${checkRun.status}` : "";
    if (line && line !== last) say(line);
    last = line;
  }
  if (!checkRun || checkRun.status !== "completed") {
    say("  the check run did not complete in a minute");
    return { ok: false };
  }
  // Its details open the decision's page; the API has it by the check run's external_id.
  const decision = await call("GET", `/v1/release-decisions/${checkRun.external_id}`);
  say(`  release decision ${decision.decision_id}: ${decision.status}`);
  say(`  check run conclusion: ${checkRun.conclusion}`);
  say(`  title: ${checkRun.output.title}`);
  say("  summary:");
  for (const line of (checkRun.output.summary ?? "").split("\n").slice(0, 12)) say(`    ${line}`);
  const problems = github.problems.length;
  if (problems > 0) {
    say(`  ${problems} request(s) of the App did not match GitHub's API description: ${github.problems.join("; ")}`);
  }
  return {
    ok: decision.status === "ALLOWED" && checkRun.conclusion === "success" && problems === 0,
    decisionPath: decision.links.self,
    decisionPage: decision.links.html,
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
