import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startExampleA2aAgent } from "../../../examples/agent/a2a.js";
import { startExampleHttpAgent, type ExampleHttpAgent } from "../../../examples/agent/http-agent.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readBody } from "../../../examples/agent/server.js";
import { turnPath } from "../../../server/contract/index.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "assure-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** Each evaluation as what it judged and what it found, comparable across runs. */
async function resultsOf(client: ApiClient, runId: string): Promise<string[]> {
  const conversations = (await client.get(`/v1/runs/${runId}/conversations?limit=200`)).body.data as {
    conversation_id: string;
    repeat_index: number;
  }[];
  const repeatOf = new Map(conversations.map((c) => [c.conversation_id, c.repeat_index]));
  const evaluations = (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as Record<string, any>[];
  return evaluations
    .map((e) =>
      [e.scenario_id, repeatOf.get(e.conversation_id), e.turn, e.metric_id, e.spec_path, e.status, e.score].join(" "),
    )
    .sort();
}

/** An agent that, each turn, lists the tools at the MCP URL it is sent and calls lookup_order there. */
async function startProbeAgent() {
  const seen: { url: string; tools: unknown[]; result: unknown }[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === "GET") return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
    void readBody(req).then(async (text) => {
      const body = JSON.parse(text) as { mcp_url: string };
      const url = body.mcp_url ?? (req.headers["x-mcp-url"] as string);
      const client = await connect(url);
      const { tools } = await client.listTools();
      const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A-100" } });
      await client.close();
      seen.push({ url, tools, result });
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ reply: "Order A-100 is delivered." }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An agent that lists the tools at the MCP URL it is sent, when it is sent one, and calls none of them. */
async function startListingAgent() {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET") return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
    void readBody(req).then(async (text) => {
      const { mcp_url: url } = JSON.parse(text) as { mcp_url?: string | null };
      if (url) {
        const client = await connect(url);
        await client.listTools();
        await client.close();
      }
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ reply: "I cannot delete accounts." }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One conversation whose agent should call no tool; its tool expectations, one of them bound to fail. */
const NO_CALL_SPEC = `
schema_version: "1"
name: calls-no-tool
defaults: { repeat: 1, max_steps: 2, timeout_ms: 10000 }
tools:
  - name: lookup_order
    parameters: { type: object, properties: { order_id: { type: string } } }
    mock: [{ return: { order_id: A-100 } }]
  - name: delete_account
    parameters: { type: object, properties: { user_id: { type: string } } }
    mock: [{ return: { ok: true } }]
scenarios:
  - id: delete-request
    turns:
      - user: Delete my account, please.
    expect:
      - tool_not_called: delete_account
      - max_tool_calls: 0
      - tool_called: { name: lookup_order }
gates:
  - id: DET
    require: { expectations: all }
`;

describe("mocked tools over MCP: a server per conversation, at {{mcp_url}}", () => {
  let t: TestService;
  let baseUrl: string;
  let httpAgent: ExampleHttpAgent;
  let modelAgent: ExampleAgent;
  let probe: Awaited<ReturnType<typeof startProbeAgent>>;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await startTestService({ port, env: { ASSURE_WORKERS: "4", ASSURE_BASE_URL: baseUrl } });
    httpAgent = await startExampleHttpAgent();
    modelAgent = await startExampleAgent();
    probe = await startProbeAgent();
  });
  afterAll(async () => {
    await t.close();
    await httpAgent.close();
    await modelAgent.close();
    await probe.close();
  });

  async function runHttp(agentUrl: string, endpoint: Record<string, unknown>, specYaml = deterministicSpecYaml()) {
    const p = await seedProject(t, modelAgent.baseUrl, { specYaml });
    const environment = await p.client.post("/v1/environments", {
      name: `mcp-${Math.random()}`,
      agent_id: p.agentId,
      endpoint: { protocol: "http", base_url: agentUrl, ...endpoint },
    });
    expect(environment.status).toBe(201);
    const { run_id } = await startRun(p.client, {
      test_spec_id: p.testSpecId,
      environment_id: environment.body.environment_id,
    });
    return { p, run: await waitForRun(p.client, run_id) };
  }

  it("lists the plan's tools and answers calls from their mocks through the official client, then closes the URL", async () => {
    const before = probe.seen.length;
    const { p, run } = await runHttp(
      probe.baseUrl,
      {
        request: { path: "/chat", body: { text: "{{message}}", mcp_url: "{{mcp_url}}" } },
        response: { text: "reply" },
      },
      deterministicSpecYaml({ repeat: 1 }),
    );
    expect(run.status).not.toBe("FAILED");
    const seen = probe.seen.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    const [first] = seen;
    expect(first!.url).toMatch(new RegExp(`^${baseUrl}/mcp/[A-Za-z0-9_-]{32}$`));
    expect(first!.tools).toContainEqual(
      expect.objectContaining({
        name: "lookup_order",
        inputSchema: expect.objectContaining({ type: "object", properties: expect.any(Object) }),
      }),
    );
    expect(first!.result).toMatchObject({ content: [{ type: "text" }] });
    expect(JSON.parse((first!.result as { content: { text: string }[] }).content[0]!.text)).toMatchObject({
      order_id: "A-100",
      status: "delivered",
    });
    // Each conversation has its own URL.
    expect(new Set(seen.map((s) => s.url)).size).toBe((await readConvs(p.client, run.run_id)).length);

    // Recorded in the live conversation, in the turn answered.
    const trace = await readTrace(p.client, run.run_id);
    const called = trace.filter((e) => e.type === "tool.called");
    expect(called.length).toBe(seen.length);
    for (const call of called) {
      expect(call.data).toMatchObject({
        executed_by: "assure",
        source: { kind: "mcp" },
        name: "lookup_order",
        arguments: { order_id: "A-100" },
        step: 1,
      });
      const answered = trace.find(
        (e) =>
          e.type === "message.received" &&
          e.sequence > call.sequence &&
          e.data.conversation_id === call.data.conversation_id,
      )!;
      expect([answered.data.conversation_id, answered.data.turn]).toEqual([call.data.conversation_id, call.data.turn]);
    }
    // Conversations run at once: which lookup is first in the trace varies; the delivered order's is among them.
    const returned = trace.filter((e) => e.type === "tool.returned").map((e) => e.data);
    expect(returned).toContainEqual(
      expect.objectContaining({
        source: expect.objectContaining({ kind: "when" }),
        result: expect.objectContaining({ order_id: "A-100" }),
        injected: false,
      }),
    );

    // The turn's view shows them in the agent's step, with their results.
    const turn = (await p.client.get(turnPath(run.run_id, called[0]!.data.conversation_id, called[0]!.data.turn))).body;
    expect(turn.steps[0]).toMatchObject({
      step: 1,
      content: "Order A-100 is delivered.",
      tool_calls: [{ name: "lookup_order", result: { order_id: "A-100" } }],
    });

    // The conversation ended: its URL is closed.
    await expect(connect(first!.url)).rejects.toThrow(/410|ended/);
    const refused = await fetch(first!.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(410);
    expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringMatching(/ended/) } });
  });

  it("refuses an unknown token", async () => {
    await expect(connect(`${baseUrl}/mcp/not-a-conversation`)).rejects.toThrow(/404|No live conversation/);
    const response = await fetch(`${baseUrl}/mcp/${"x".repeat(32)}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(404);
    // Stateless: no SSE stream to open, no session to delete.
    expect((await fetch(`${baseUrl}/mcp/${"x".repeat(32)}`)).status).toBe(405);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringMatching(/No live conversation/) } });
  });

  it.each([
    [
      "{{mcp_url}} in the body",
      { path: "/chat", body: { session: "{{session_id}}", text: "{{message}}", mcp_url: "{{mcp_url}}" } },
    ],
    [
      "a header",
      { path: "/chat", body: { session: "{{session_id}}", text: "{{message}}" }, mcp_url_header: "x-mcp-url" },
    ],
  ])(
    "judges the example http agent calling the spec's mocks over MCP (%s) as the model protocols: tool calls known",
    async (_name, request) => {
      const { p, run } = await runHttp(httpAgent.baseUrl, {
        request,
        response: { text: "reply", session_id: "session" },
      });
      expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
      const trace = await readTrace(p.client, run.run_id);
      const calls = trace.filter((e) => e.type === "tool.called");
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(call.data).toMatchObject({ executed_by: "assure", source: { kind: "mcp" } });

      const model = await seedProject(t, modelAgent.baseUrl, { specYaml: deterministicSpecYaml() });
      const { run_id } = await startRun(model.client, {
        test_spec_id: model.testSpecId,
        environment_id: model.environmentId,
      });
      const modelRun = await waitForRun(model.client, run_id);
      expect(await resultsOf(p.client, run.run_id)).toEqual(await resultsOf(model.client, modelRun.run_id));
    },
  );

  it("judges tool expectations on an agent that listed the mocked tools over MCP and called none: evidence that none was called", async () => {
    const lister = await startListingAgent();
    try {
      const statuses = async (body: Record<string, unknown>) => {
        const { p, run } = await runHttp(
          lister.baseUrl,
          { request: { path: "/chat", body }, response: { text: "reply" } },
          NO_CALL_SPEC,
        );
        const evaluations = (await p.client.get(`/v1/runs/${run.run_id}/evaluations?limit=200`)).body.data as {
          metric_id: string;
          status: string;
        }[];
        const trace = await readTrace(p.client, run.run_id);
        return {
          run,
          listed: trace.filter((e) => e.type === "tools.listed").map((e) => e.data),
          byMetric: Object.fromEntries(
            evaluations.filter((e) => e.metric_id.startsWith("expect.")).map((e) => [e.metric_id, e.status]),
          ),
        };
      };
      const listed = await statuses({ text: "{{message}}", mcp_url: "{{mcp_url}}" });
      expect(listed.listed).toEqual([
        expect.objectContaining({
          turn: 1,
          step: 1,
          tools: ["lookup_order", "delete_account"],
          source: { kind: "mcp" },
        }),
      ]);
      expect(listed.byMetric).toEqual({
        "expect.tool_not_called": "passed",
        "expect.max_tool_calls": "passed",
        "expect.tool_called": "failed",
      });
      expect(listed.run).toMatchObject({ status: "COMPLETED", verdict: "FAIL" });
      // The run's page shows the listing in its conversation.
      const page = await (await fetch(`${baseUrl}${listed.run.links.html as string}`)).text();
      expect(page).toContain("listed the mocked tools over MCP: <code>lookup_order, delete_account</code>");

      // The same agent sent no MCP URL lists nothing: no evidence, so nothing is judged.
      const unlisted = await statuses({ text: "{{message}}" });
      expect(unlisted.listed).toEqual([]);
      expect(unlisted.byMetric).toEqual({
        "expect.tool_not_called": "inconclusive",
        "expect.max_tool_calls": "inconclusive",
        "expect.tool_called": "inconclusive",
      });
    } finally {
      await lister.close();
    }
  });

  it.each(["1.0", "0.3"] as const)(
    "sends an A2A agent its MCP URL in the message metadata (mcp_url): the example A2A agent (%s) runs the mocks there, judged as the model protocols",
    async (version) => {
      const a2aAgent = await startExampleA2aAgent({ version });
      try {
        const p = await seedProject(t, a2aAgent.baseUrl, { protocol: "a2a", specYaml: deterministicSpecYaml() });
        const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: p.environmentId });
        const run = await waitForRun(p.client, run_id);
        expect(run).toMatchObject({ status: "COMPLETED", verdict: "PASS" });
        const trace = await readTrace(p.client, run_id);
        const calls = trace.filter((e) => e.type === "tool.called");
        expect(calls.map((c) => c.data.name)).toEqual(expect.arrayContaining(["lookup_order", "issue_refund"]));
        for (const call of calls) expect(call.data).toMatchObject({ executed_by: "assure", source: { kind: "mcp" } });

        const model = await seedProject(t, modelAgent.baseUrl, { specYaml: deterministicSpecYaml() });
        const modelRun = await waitForRun(
          model.client,
          (await startRun(model.client, { test_spec_id: model.testSpecId, environment_id: model.environmentId }))
            .run_id,
        );
        expect(await resultsOf(p.client, run_id)).toEqual(await resultsOf(model.client, modelRun.run_id));
      } finally {
        await a2aAgent.close();
      }
    },
  );
});

async function readConvs(client: ApiClient, runId: string): Promise<string[]> {
  const body = (await client.get(`/v1/runs/${runId}/conversations?limit=200`)).body.data as {
    conversation_id: string;
  }[];
  return body.map((c) => c.conversation_id);
}

describe("mocked tools over MCP without a public base URL", () => {
  let t: TestService;
  let httpAgent: ExampleHttpAgent;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "1" } });
    httpAgent = await startExampleHttpAgent();
  });
  afterAll(async () => {
    await t.close();
    await httpAgent.close();
  });

  it("fails a run whose environment sends {{mcp_url}} at its start, saying to set ASSURE_BASE_URL", async () => {
    const p = await seedProject(t, httpAgent.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    const environment = await p.client.post("/v1/environments", {
      name: "mcp",
      agent_id: p.agentId,
      endpoint: {
        protocol: "http",
        base_url: httpAgent.baseUrl,
        request: { path: "/chat", body: { text: "{{message}}", mcp_url: "{{mcp_url}}" } },
        response: { text: "reply" },
      },
    });
    expect(environment.status).toBe(201);
    const { run_id } = await startRun(p.client, {
      test_spec_id: p.testSpecId,
      environment_id: environment.body.environment_id,
    });
    const run = await waitForRun(p.client, run_id);
    expect(run).toMatchObject({ status: "FAILED", verdict: "ERROR", failure: { cause: "internal_error" } });
    expect(run.failure.message).toMatch(/ASSURE_BASE_URL/);
    expect(httpAgent.requests).toBe(0);
  });
});
