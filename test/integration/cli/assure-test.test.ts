import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { openStore } from "../../../server/store/index.js";
import { systemClock } from "../../../server/clock.js";
import { ROOT, runAssure, startAssure } from "../../helpers/assure-cli.js";
import { startJudgeServer } from "../../helpers/judge-server.js";

const DETERMINISTIC = join(ROOT, "examples/refund-agent-deterministic.yaml");
const WHOLE = join(ROOT, "examples/refund-agent.yaml");

describe("assure test (the service's engine in this process)", () => {
  let agent: ExampleAgent;
  let judge: Awaited<ReturnType<typeof startJudgeServer>>;
  const dir = mkdtempSync(join(tmpdir(), "assure-cli-test-"));
  const judgeEnv = () => ({ ASSURE_JUDGE_BASE_URL: judge.baseUrl, ASSURE_JUDGE_MODEL: "judge-model-1" });

  beforeAll(async () => {
    agent = await startExampleAgent();
    judge = await startJudgeServer();
  });
  afterAll(async () => {
    await judge.close();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a spec against an agent on this machine and exits 0 when the release is allowed", async () => {
    const result = await runAssure(["test", DETERMINISTIC, "--agent", agent.baseUrl]);
    expect(result.stderr).not.toMatch(/Error|error:/);
    expect(result.status).toBe(0);
    // Every case × check, with its spec line, its passes and its interval; the gate; the decision.
    expect(result.stdout).toMatch(
      /refund-agent-deterministic \(examples\/refund-agent-deterministic\.yaml, git:[0-9a-f]+\) — COMPLETED, PASS/,
    );
    expect(result.stdout).toMatch(/full-refund\s+tool_called \{"name":"lookup_order".*\s65\s+3\/3\s+43\.9%–100%/);
    expect(result.stdout).toMatch(/unknown-order\s+tool_not_called issue_refund\s+101\s+3\/3/);
    expect(result.stdout).toMatch(/✓ DET Deterministic expectations hold: passed/);
    expect(result.stdout).toMatch(/Release allowed: 1 of 1 gate passed \(exit 0\)/);
    // Not a terminal: progress as plain lines on stderr, never on stdout.
    expect(result.stderr).toMatch(/refund-agent-deterministic: COMPLETED \(6\/6 conversations/);
    expect(result.stdout).not.toMatch(/conversations \(/);
  });

  it("exits 1 on a failed gate, naming each failed check with its spec line and what the agent said and called", async () => {
    const result = await runAssure([
      "test",
      DETERMINISTIC,
      "--agent",
      agent.baseUrl,
      "--model",
      "refund-agent+wrong-arguments",
    ]);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/— COMPLETED, FAIL/);
    expect(result.stdout).toContain("✗ full-refund  tool_called");
    expect(result.stdout).toContain("examples/refund-agent-deterministic.yaml:65");
    expect(result.stdout).toMatch(/failed in 3 of 3: lookup_order was called, but not with \{"order_id":"A-100"\}/);
    expect(result.stdout).toMatch(
      /repeat 1, turn 1: said "I could not find order a-100\..*"; called lookup_order\(\{"order_id":"a-100"\}\)/,
    );
    expect(result.stdout).toMatch(/✗ DET Deterministic expectations hold: failed — 15 of 30/);
    expect(result.stdout).toMatch(/Release blocked: 1 of 1 gate failed \(exit 1\)/);
    // --fail-on never reports the same and exits 0.
    const never = await runAssure([
      "test",
      DETERMINISTIC,
      "--agent",
      agent.baseUrl,
      "--model",
      "refund-agent+wrong-arguments",
      "--fail-on",
      "never",
    ]);
    expect(never.status).toBe(0);
    expect(never.stdout).toMatch(/Release blocked: 1 of 1 gate failed \(exit 0\)/);
  });

  it("exits 2 when a gate is inconclusive (a judged metric without a judge), or 0 with --fail-on failed", async () => {
    const result = await runAssure(["test", WHOLE, "--agent", agent.baseUrl]);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(
      /\? TASK Task completion: inconclusive — metric 'task_completion' needs an LLM judge/,
    );
    expect(result.stdout).toMatch(/Release blocked: 1 gate inconclusive \(exit 2\)/);
    const lenient = await runAssure(["test", WHOLE, "--agent", agent.baseUrl, "--fail-on", "failed", "--quiet"]);
    expect(lenient.status).toBe(0);
    expect(lenient.stdout.trim().split("\n")).toHaveLength(1); // --quiet: the decision line alone
  });

  it("judges metrics with the judge the environment names, read from an env file as from the service's environment", async () => {
    const envFile = join(dir, "judge.env");
    writeFileSync(envFile, `# the judge\nASSURE_JUDGE_BASE_URL=${judge.baseUrl}\nASSURE_JUDGE_MODEL=judge-model-1\n`);
    judge.setMode({ kind: "rule" });
    const before = judge.requests.length;
    const result = await runAssure(["test", WHOLE, "--agent", agent.baseUrl, "--env-file", envFile]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/full-refund\s+metric task_completion\s+\d+\s+3\/3/);
    expect(result.stdout).toMatch(/✓ TASK Task completion: passed/);
    expect(judge.requests.length - before).toBe(3);
  });

  it("exits 2 and says why when the agent cannot be reached, before anything runs", async () => {
    const result = await runAssure(["test", DETERMINISTIC, "--agent", "http://127.0.0.1:9/v1"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/the agent is not ready: GET http:\/\/127\.0\.0\.1:9\/v1\/models failed/);
  });

  it("exits 64 on a usage error and 65 on an invalid spec, naming the file and line", async () => {
    for (const args of [
      ["test", DETERMINISTIC],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--bogus"],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--repeat", "0"],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--protocol", "smoke-signals"],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--fail-on", "sometimes"],
      ["test", DETERMINISTIC, "--agent", "ftp://example.com"],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--header", "Authorization: Bearer ${UNSET_TOKEN}"],
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--scenario", "no-such-case"],
    ]) {
      const result = await runAssure(args, { cwd: dir });
      expect({ args, status: result.status }).toEqual({ args, status: 64 });
      expect(result.stderr).toMatch(/^assure test: /);
    }
    const broken = join(dir, "broken.yaml");
    writeFileSync(
      broken,
      readFileSync(DETERMINISTIC, "utf8").replace("tool_not_called: delete_account", "tool_not_caled: delete_account"),
    );
    const invalid = await runAssure(["test", broken, "--agent", agent.baseUrl], { cwd: dir });
    expect(invalid.status).toBe(65);
    expect(invalid.stderr).toMatch(
      /broken\.yaml:84: scenarios\[0\]\.expect\[1\]\.tool_not_caled: Unrecognized key: "tool_not_caled" — did you mean tool_not_called\?/,
    );
    const missing = await runAssure(["test", join(dir, "nope.yaml"), "--agent", agent.baseUrl], { cwd: dir });
    expect(missing.status).toBe(65);
  });

  it("runs only the scenarios --scenario names, each --repeat times, leaving out gates that would judge nothing", async () => {
    const json = join(dir, "selected.json");
    const result = await runAssure(
      ["test", WHOLE, "--agent", agent.baseUrl, "--scenario", "unknown-*", "--repeat", "2", "--json", json],
      { env: judgeEnv() },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/left out by --scenario: gate TASK/);
    const output = JSON.parse(readFileSync(json, "utf8"));
    const evaluations = output.runs[0].evaluations as { scenario_id: string; conversation_id: string | null }[];
    const ofCases = evaluations.filter((e) => e.conversation_id !== null);
    expect(new Set(ofCases.map((e) => e.scenario_id))).toEqual(new Set(["unknown-order"]));
    expect(output.runs[0].evidence.gates.map((g: { id: string }) => g.id)).toEqual(["DET", "SEC"]);
    // Two repeats of the one scenario left; its checks still cite the lines of the file.
    expect(result.stdout).toMatch(/unknown-order\s+tool_called \{"name":"lookup_order".*\s76\s+2\/2/);
    expect(output.runs[0].evidence.spec_version).toMatch(/^sha256:/);
  });

  it("reads the agent's credentials from the environment, and never the service's database (ASSURE_DB)", async () => {
    const serviceDb = join(dir, "service.db");
    const result = await runAssure(
      ["test", DETERMINISTIC, "--agent", agent.baseUrl, "--header", "Authorization: Bearer ${AGENT_TOKEN}", "--quiet"],
      { env: { AGENT_TOKEN: "s3cret", ASSURE_DB: serviceDb } },
    );
    expect(result.status).toBe(0);
    expect(agent.calls.filter((call) => call.path.endsWith("/chat/completions")).at(-1)?.authorization).toBe(
      "Bearer s3cret",
    );
    expect(existsSync(serviceDb)).toBe(false);
  });

  it("keeps its runs in --db, where the service's store reads them", async () => {
    const db = join(dir, "kept.db");
    for (let i = 0; i < 2; i++) {
      expect((await runAssure(["test", DETERMINISTIC, "--agent", agent.baseUrl, "--db", db, "--quiet"])).status).toBe(
        0,
      );
    }
    const store = await openStore(db, { clock: systemClock });
    try {
      const runs = (await store.listRuns({}, { limit: 10, after: undefined })).rows;
      expect(runs.map((run) => [run.status, run.verdict])).toEqual([
        ["COMPLETED", "PASS"],
        ["COMPLETED", "PASS"],
      ]);
      expect(await store.getProjectByName("local")).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it("runs the spec files .assure/config.yml names when given none, from any folder below it", async () => {
    const project = join(dir, "repo");
    mkdirSync(join(project, ".assure/specs"), { recursive: true });
    mkdirSync(join(project, "src/deep"), { recursive: true });
    writeFileSync(
      join(project, ".assure/config.yml"),
      stringify({ version: 1, runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }] }),
    );
    const spec = parse(readFileSync(DETERMINISTIC, "utf8"));
    writeFileSync(join(project, ".assure/specs/one.yaml"), stringify({ ...spec, name: "one" }));
    writeFileSync(
      join(project, ".assure/specs/two.yaml"),
      stringify({ ...spec, name: "two", scenarios: [spec.scenarios[1]] }),
    );
    const result = await runAssure(["test", "--agent", agent.baseUrl], { cwd: join(project, "src/deep") });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^one \(\.assure\/specs\/one\.yaml, git:/m);
    expect(result.stdout).toMatch(/^two \(\.assure\/specs\/two\.yaml, git:/m);
    expect(result.stdout).toMatch(/Release allowed: 2 of 2 gates passed/);
  });

  it("stops on Ctrl-C while its runs go on, and exits 130", async () => {
    const running = startAssure(["test", DETERMINISTIC, "--agent", agent.baseUrl, "--model", "refund-agent+slow"]);
    await running.waitForOutput(/refund-agent-deterministic: 0\/6 conversations/, "the run to start");
    expect(await running.stop("SIGINT")).toBe(130);
    expect(running.stdout).not.toMatch(/Release/);
  });

  it("starts without the service's HTTP stack, the GitHub App, or libraries that only some runs need", () => {
    /** The packages a bundle imports as it loads (its static imports; dynamic ones load when asked for). */
    const loadedBy = (bundle: string) =>
      [
        ...readFileSync(join(ROOT, "build/app", bundle), "utf8").matchAll(/^import\s(?:[^;]*?\sfrom\s)?"([^"]+)";/gms),
      ].map((m) => m[1]!);
    expect(loadedBy("cli.js").filter((name) => !name.startsWith("node:") && !name.startsWith("./cli-"))).toEqual([]);
    const test = loadedBy("cli-test.js");
    expect(test).toContain("better-sqlite3");
    for (const heavy of [
      "probot",
      "fastify",
      "@fastify/swagger",
      "fastify-type-provider-zod",
      "piscina",
      "jose",
      "xmlbuilder2",
      "chokidar",
      "@a2a-js/sdk/client",
      "@modelcontextprotocol/sdk/server/mcp.js",
      // Loaded when an agent that runs its own tools first asks for them over MCP.
      "@modelcontextprotocol/sdk/server/index.js",
      "@modelcontextprotocol/sdk/server/streamableHttp.js",
    ]) {
      expect({ heavy, loaded: test.includes(heavy) }).toEqual({ heavy, loaded: false });
    }
  });
});
