import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { ROOT, runAssure, startAssure } from "../../helpers/assure-cli.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

const SPEC = join(ROOT, "examples/refund-agent-deterministic.yaml");
const SPEC_YAML = readFileSync(SPEC, "utf8");

/** The example http agent's mapping: its tools are known from its spans, or from the calls it makes over MCP. */
const TRACED = {
  request: { method: "POST", path: "/chat", body: { session: "{{session_id}}", text: "{{message}}" } },
  response: { text: "reply", session_id: "session" },
  trace_wait_ms: 3000,
};
const OVER_MCP = {
  request: {
    method: "POST",
    path: "/chat",
    body: { session: "{{session_id}}", text: "{{message}}", mcp_url: "{{mcp_url}}" },
  },
  response: { text: "reply", session_id: "session" },
  trace_wait_ms: 0,
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The example http agent as its own process (`AGENT_PROTOCOL=http`), exporting its spans with the OTel SDK when told where. */
async function startAgentProcess(
  env: Record<string, string> = {},
): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "build/examples/agent/main.js")], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", AGENT_PROTOCOL: "http", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const [, baseUrl] = await waitFor(() => /"base_url":"([^"]+)"/.exec(out) ?? undefined, "the agent to listen", {
    timeoutMs: 30_000,
  });
  return {
    baseUrl: baseUrl!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Each evaluation as what it judged and what it found: the same list for the same verdicts. */
type Judged = Record<string, unknown>;
const judged = (evaluations: Judged[]) =>
  evaluations.map((e) => [e.scenario_id, e.turn, e.metric_id, e.spec_path, e.status, e.score].join(" ")).sort();

async function serviceEvaluations(client: ApiClient, runId: string): Promise<Judged[]> {
  return (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as Judged[];
}

describe("assure test with an agent that runs its own tools: the service's OTLP receiver and MCP servers on loopback", () => {
  let t: TestService;
  let modelAgent: ExampleAgent;
  const dir = mkdtempSync(join(tmpdir(), "assure-own-tools-"));
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestService({ port, env: { ASSURE_WORKERS: "4", ASSURE_BASE_URL: `http://127.0.0.1:${port}` } });
    modelAgent = await startExampleAgent();
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await t.close();
    await modelAgent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The spec run by the service against an http environment reaching the agent: its run and evaluations. */
  async function serviceRun(endpoint: Record<string, unknown>, agentFor: (tracesKey: string) => Promise<string>) {
    const p = await seedProject(t, modelAgent.baseUrl, { specYaml: SPEC_YAML });
    const agentUrl = await agentFor(await t.issueKey(p.projectId, ["traces:write"]));
    const environment = await p.client.post("/v1/environments", {
      name: `own-tools-${Math.random()}`,
      agent_id: p.agentId,
      endpoint: { protocol: "http", base_url: agentUrl, readiness_path: "/health", ...endpoint },
    });
    expect(environment.status).toBe(201);
    const { run_id } = await startRun(p.client, {
      test_spec_id: p.testSpecId,
      environment_id: environment.body.environment_id,
    });
    const run = await waitForRun(p.client, run_id, 60_000);
    const evidence = (await p.client.get(`/v1/runs/${run_id}/evidence`)).body;
    return { run, evidence, evaluations: await serviceEvaluations(p.client, run_id) };
  }

  /** The same spec run by `assure test` against the agent, on `port`: its output and its --json. */
  async function localRun(name: string, endpoint: Record<string, unknown>, agentUrl: string, port: number) {
    const endpointFile = join(dir, `${name}.yaml`);
    writeFileSync(endpointFile, JSON.stringify({ protocol: "http", readiness_path: "/health", ...endpoint }));
    const json = join(dir, `${name}.json`);
    const result = await runAssure([
      "test",
      SPEC,
      "--agent",
      agentUrl,
      "--endpoint",
      endpointFile,
      "--port",
      String(port),
      "--json",
      json,
    ]);
    const output = JSON.parse(readFileSync(json, "utf8")) as {
      runs: { evidence: { verdict: string; gates: { gate_id: string; status: string }[] }; evaluations: Judged[] }[];
    };
    return { result, run: output.runs[0]! };
  }

  it("receives the example http agent's GenAI spans (OTel SDK, OTLP/protobuf) at the printed endpoint, without a key: the service's verdicts", async () => {
    const service = await serviceRun(TRACED, async (key) => {
      const agent = await startAgentProcess({
        OTEL_EXPORTER_OTLP_ENDPOINT: `${t.baseUrl}/otlp`,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${key}`,
      });
      stops.push(() => agent.stop());
      return agent.baseUrl;
    });
    expect(service.run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
    expect(service.evaluations.length).toBeGreaterThan(0);

    const port = await freePort();
    const agent = await startAgentProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/otlp` });
    stops.push(() => agent.stop());
    const local = await localRun("traced", TRACED, agent.baseUrl, port);
    expect(local.result.stderr).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:${port}/otlp`);
    expect(local.result.status).toBe(0);
    expect(local.run.evidence.verdict).toBe(service.run.verdict);
    expect(local.run.evidence.gates.map((g) => [g.gate_id, g.status])).toEqual(
      service.evidence.gates.map((g: { gate_id: string; status: string }) => [g.gate_id, g.status]),
    );
    expect(judged(local.run.evaluations)).toEqual(judged(service.evaluations));
  });

  it("serves the mocked tools over MCP at {{mcp_url}} to the example agent's MCP client: the service's verdicts", async () => {
    const agent = await startAgentProcess();
    stops.push(() => agent.stop());
    const service = await serviceRun(OVER_MCP, async () => agent.baseUrl);
    expect(service.run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });

    const local = await localRun("mcp", OVER_MCP, agent.baseUrl, await freePort());
    expect(local.result.status).toBe(0);
    expect(local.run.evidence.verdict).toBe(service.run.verdict);
    expect(judged(local.run.evaluations)).toEqual(judged(service.evaluations));
    // Each tool call came over MCP: an expectation on a call the agent only made there passed.
    expect(local.run.evaluations.some((e) => e.metric_id === "expect.tool_called" && e.status === "passed")).toBe(true);
  });

  it("answers only requests addressed to its own loopback host, and refuses a bad export with the service's envelope", async () => {
    const port = await freePort();
    const agent = await startAgentProcess();
    stops.push(() => agent.stop());
    const endpointFile = join(dir, "open.yaml");
    writeFileSync(endpointFile, JSON.stringify({ protocol: "http", readiness_path: "/health", ...OVER_MCP }));
    const running = startAssure([
      "test",
      SPEC,
      "--agent",
      agent.baseUrl,
      "--endpoint",
      endpointFile,
      "--port",
      String(port),
      "--open",
      "--scenario",
      "full-refund",
      "--repeat",
      "1",
    ]);
    stops.push(async () => void (await running.stop()));
    await running.waitForOutput(/Serving the evidence pages until Ctrl-C/, "the pages served", 60_000);
    const otlp = `http://127.0.0.1:${port}/otlp/v1/traces`;
    // A web page's request through a name rebound to 127.0.0.1 names its own host: refused.
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        otlp,
        { method: "POST", headers: { host: `evil.example:${port}`, "content-type": "application/json" } },
        (response) => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      request.once("error", reject);
      request.end("{}");
    });
    expect(rebound).toBe(421);
    const notOtlp = await fetch(otlp, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(notOtlp.status).toBe(415);
    expect(await notOtlp.json()).toMatchObject({ error: { code: "UNSUPPORTED_MEDIA_TYPE" } });
    const broken = await fetch(otlp, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: Buffer.from([0xff, 0xff]),
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: "VALIDATION_FAILED" } });
    // A span of no live conversation is counted as rejected, as the service counts it.
    const stray = await fetch(otlp, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: "0".repeat(31) + "1",
                    spanId: "0".repeat(15) + "1",
                    name: "x",
                    startTimeUnixNano: "1",
                    endTimeUnixNano: "2",
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(stray.status).toBe(200);
    expect(await stray.json()).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });
    const unknown = await fetch(`http://127.0.0.1:${port}/mcp/${"a".repeat(32)}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(unknown.status).toBe(404);
    expect(await running.stop()).toBe(0);
  });
});
