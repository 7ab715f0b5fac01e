import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { startExampleHttpAgent, type ExampleHttpAgent } from "../../../examples/agent/http-agent.js";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { readBody } from "../../../examples/agent/server.js";
import { decodeTraceExport, decodeTraceResponse } from "../../../server/engine/traces/otlp.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { readTrace, startRun, waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

/** The example http agent's mapping without `tool_calls`: its tools are known from its traces only. */
const CHAT = {
  request: { method: "POST", path: "/chat", body: { session: "{{session_id}}", text: "{{message}}" } },
  response: { text: "reply", session_id: "session" },
};

describe("tool calls from the agent's own OpenTelemetry traces (OTLP)", () => {
  let t: TestService;
  let modelAgent: ExampleAgent;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "4" } });
    modelAgent = await startExampleAgent();
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await t.close();
    await modelAgent.close();
  });

  /** A project whose key may export traces, and an http environment reaching `baseUrl`. */
  async function projectFor(baseUrl: string, specYaml = deterministicSpecYaml(), mapping = CHAT) {
    const p = await seedProject(t, modelAgent.baseUrl, { specYaml });
    const environment = await p.client.post("/v1/environments", {
      name: `http-${randomUUID()}`,
      agent_id: p.agentId,
      endpoint: { protocol: "http", base_url: baseUrl, trace_wait_ms: 3000, ...mapping },
    });
    expect(environment.status).toBe(201);
    expect(environment.body.endpoint.trace_wait_ms).toBe(3000);
    const tracesKey = await t.issueKey(p.projectId, ["traces:write"]);
    return { p, environmentId: environment.body.environment_id as string, tracesKey };
  }

  async function run(p: SeededProject, environmentId: string) {
    const { run_id } = await startRun(p.client, { test_spec_id: p.testSpecId, environment_id: environmentId });
    return waitForRun(p.client, run_id, 60_000);
  }

  /** Each evaluation as what it judged and what it found, comparable across runs. */
  async function resultsOf(client: ApiClient, runId: string): Promise<string[]> {
    const conversations = (await client.get(`/v1/runs/${runId}/conversations?limit=200`)).body.data as {
      conversation_id: string;
      repeat_index: number;
    }[];
    const repeatOf = new Map(conversations.map((c) => [c.conversation_id, c.repeat_index]));
    const evaluations = (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as Record<
      string,
      any
    >[];
    return evaluations
      .map((e) =>
        [e.scenario_id, repeatOf.get(e.conversation_id), e.turn, e.metric_id, e.spec_path, e.status, e.score].join(" "),
      )
      .sort();
  }

  let modelResults: string[] | undefined;
  async function modelProtocolResults() {
    if (modelResults) return modelResults;
    const model = await seedProject(t, modelAgent.baseUrl, { specYaml: deterministicSpecYaml() });
    const modelRun = await run(model, model.environmentId);
    return (modelResults = await resultsOf(model.client, modelRun.run_id));
  }

  it.each([
    ["protobuf, gzip, GenAI conventions", { encoding: "protobuf", gzip: true, conventions: "genai" }],
    ["JSON, OpenInference", { encoding: "json", gzip: false, conventions: "openinference" }],
  ] as const)(
    "judges the http example agent from its spans (%s) as the same agent behind a model protocol",
    async (_name, tracing) => {
      const holder: { key?: string } = {};
      const agent: ExampleHttpAgent = await startExampleHttpAgent({
        traces: {
          endpoint: `${t.baseUrl}/otlp`,
          headers: {
            get authorization() {
              return `Bearer ${holder.key}`;
            },
          } as Record<string, string>,
          ...tracing,
        },
      });
      closers.push(() => agent.close());
      const { p, environmentId, tracesKey } = await projectFor(agent.baseUrl);
      holder.key = tracesKey;
      const traced = await run(p, environmentId);
      expect(traced).toMatchObject({ status: "COMPLETED", verdict: "PASS" });

      const trace = await readTrace(p.client, traced.run_id);
      const calls = trace.filter((e) => e.type === "tool.called");
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(call.data).toMatchObject({ executed_by: "agent", source: { kind: "trace" } });
      // Conversations run at once: which lookup is first in the trace varies; the delivered order's is among them.
      const returned = trace.filter((e) => e.type === "tool.returned").map((e) => e.data);
      expect(returned).toContainEqual(
        expect.objectContaining({ source: { kind: "agent" }, result: expect.objectContaining({ order_id: "A-100" }) }),
      );
      const started = trace.filter((e) => e.type === "conversation.started");
      for (const s of started) expect(s.data.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(trace.filter((e) => e.type === "trace.received")).toHaveLength(started.length);

      expect(await resultsOf(p.client, traced.run_id)).toEqual(await modelProtocolResults());
    },
  );

  it("records a call its reply and its trace both report once: the reply's, its result from either", async () => {
    const holder = { key: "" };
    const agent = await startExampleHttpAgent({
      traces: {
        endpoint: `${t.baseUrl}/otlp`,
        headers: {
          get authorization() {
            return `Bearer ${holder.key}`;
          },
        } as Record<string, string>,
      },
    });
    closers.push(() => agent.close());
    // The reply names each tool it ran, without an id; its span names the call's id: merged by name and arguments.
    const steps = { ...CHAT, response: { ...CHAT.response, tool_calls: "steps[].{name: tool, arguments: args}" } };
    const { p, environmentId, tracesKey } = await projectFor(agent.baseUrl, deterministicSpecYaml(), steps);
    holder.key = tracesKey;
    const done = await run(p, environmentId);
    expect(done).toMatchObject({ status: "COMPLETED", verdict: "PASS" });

    const trace = await readTrace(p.client, done.run_id);
    const calls = trace.filter((e) => e.type === "tool.called");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.data).toMatchObject({ source: { kind: "reply" } });
    const received = trace.filter((e) => e.type === "trace.received").map((e) => e.data);
    expect(received.length).toBe(trace.filter((e) => e.type === "conversation.started").length);
    for (const data of received) expect(data).toMatchObject({ spans: expect.any(Number), tool_calls: 0 });
    expect(received.reduce((sum, data) => sum + data.spans, 0)).toBeGreaterThan(calls.length);
    // The reply told no result: each call's result is the one its span carried, recorded once.
    const returned = trace.filter((e) => e.type === "tool.returned");
    expect(returned.map((e) => `${e.data.conversation_id} ${e.data.call_id}`).sort()).toEqual(
      calls.map((e) => `${e.data.conversation_id} ${e.data.call_id}`).sort(),
    );
    for (const result of returned) expect(result.data).toMatchObject({ source: { kind: "agent" } });

    expect(await resultsOf(p.client, done.run_id)).toEqual(await modelProtocolResults());
  });

  it("lets the next conversation start while one waits for its late spans: the wait holds none of the run's concurrency", async () => {
    const agent = await startExampleHttpAgent();
    closers.push(() => agent.close());
    // One conversation at a time; an agent that exports no span, so each conversation waits the whole trace_wait_ms.
    const { p, environmentId } = await projectFor(agent.baseUrl, deterministicSpecYaml({ repeat: 1, concurrency: 1 }));
    const done = await run(p, environmentId);
    expect(done.status).toBe("INCONCLUSIVE");
    const trace = await readTrace(p.client, done.run_id);
    const at = (type: string, conversation: string) =>
      trace.find((e) => e.type === type && e.data.conversation_id === conversation)!.sequence;
    const [first, second] = trace.filter((e) => e.type === "conversation.started").map((e) => e.data.conversation_id);
    const lastAnswer = trace.findLast((e) => e.type === "message.received" && e.data.conversation_id === first)!;
    // The second started after the first's last answer, before the first ended its wait.
    expect(at("conversation.started", second)).toBeGreaterThan(lastAnswer.sequence);
    expect(at("conversation.started", second)).toBeLessThan(at("conversation.completed", first));
    expect(trace.filter((e) => e.type === "trace.received")).toEqual([]);
  });

  /**
   * An agent that answers at once and exports its span late (after its answer), twice, with a span
   * of a trace assure never minted: what each export was told is kept.
   */
  async function startLateAgent(tracesUrl: string, key: () => string) {
    const told: number[] = [];
    const server: Server = createServer((req, res) => {
      if (req.method === "GET") return res.writeHead(200, { "content-type": "application/json" }).end("{}");
      void readBody(req).then(() => {
        const [, traceId, parentId] = String(req.headers.traceparent).split("-");
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ reply: "Done.", session: "s" }));
        const spanId = randomBytes(8).toString("hex");
        const span = (trace: string, id: string, parent: string) => ({
          traceId: trace,
          spanId: id,
          parentSpanId: parent,
          name: "execute_tool lookup_order",
          kind: 1,
          startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
          endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
          attributes: [
            { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
            { key: "gen_ai.tool.name", value: { stringValue: "lookup_order" } },
            { key: "gen_ai.tool.call.arguments", value: { stringValue: '{"order_id":"A-100"}' } },
          ],
        });
        const send = async (spans: unknown[]) => {
          const response = await fetch(tracesUrl, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key()}` },
            body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }),
          });
          told.push(
            ((await response.json()) as { partialSuccess: { rejectedSpans: number } }).partialSuccess.rejectedSpans,
          );
        };
        setTimeout(() => {
          void (async () => {
            const mine = span(traceId!, spanId, parentId!);
            await send([mine, span(randomBytes(16).toString("hex"), randomBytes(8).toString("hex"), "")]);
            await send([mine]); // the same span again
          })();
        }, 400);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, told };
  }

  it("waits for late spans, records a duplicate once and rejects a trace it never minted", async () => {
    const holder = { key: "" };
    const agent = await startLateAgent(`${t.baseUrl}/otlp/v1/traces`, () => holder.key);
    const spec = deterministicSpecYaml({ repeat: 1 });
    const { p, environmentId, tracesKey } = await projectFor(agent.baseUrl, spec);
    holder.key = tracesKey;
    const done = await run(p, environmentId);
    expect(["COMPLETED", "INCONCLUSIVE"]).toContain(done.status);
    const trace = await readTrace(p.client, done.run_id);
    const conversations = trace.filter((e) => e.type === "conversation.started").length;
    const calls = trace.filter((e) => e.type === "tool.called");
    // One user turn per call: each call's span recorded once, at its turn and step.
    const turns = trace.filter((e) => e.type === "message.received").length;
    expect(calls).toHaveLength(turns);
    for (const call of calls) {
      expect(call.data).toMatchObject({
        name: "lookup_order",
        arguments: { order_id: "A-100" },
        step: 1,
        source: { kind: "trace" },
      });
    }
    expect(trace.filter((e) => e.type === "trace.received")).toHaveLength(conversations);
    // Each first export had one foreign span; the repeat was taken (and recorded once).
    expect(agent.told.filter((n) => n === 1).length).toBeGreaterThanOrEqual(turns);
  });

  describe("the endpoint", () => {
    let key: string;
    let projectId: string;
    beforeAll(async () => {
      const p = await seedProject(t, modelAgent.baseUrl);
      projectId = p.projectId;
      key = await t.issueKey(p.projectId, ["traces:write"]);
    });
    const foreign = () => ({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: randomBytes(16).toString("hex"),
                  spanId: randomBytes(8).toString("hex"),
                  name: "x",
                  startTimeUnixNano: "1",
                  endTimeUnixNano: "2",
                },
              ],
            },
          ],
        },
      ],
    });
    const post = (body: Uint8Array | string, headers: Record<string, string>, token = key) =>
      fetch(`${t.baseUrl}/otlp/v1/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, ...headers },
        body: typeof body === "string" ? body : new Uint8Array(body),
      });

    it("answers JSON in JSON and protobuf in protobuf, counting spans of no live conversation as rejected", async () => {
      const json = await post(JSON.stringify(foreign()), { "content-type": "application/json" });
      expect(json.status).toBe(200);
      expect(await json.json()).toEqual({ partialSuccess: { rejectedSpans: 1, errorMessage: expect.any(String) } });

      const gz = await post(gzipSync(JSON.stringify(foreign())), {
        "content-type": "application/json",
        "content-encoding": "gzip",
      });
      expect(await gz.json()).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });

      // Protobuf, written by the OpenTelemetry SDK's own serializer.
      const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
      const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
        await import("@opentelemetry/sdk-trace-base");
      const memory = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
      provider.getTracer("t").startSpan("a").end();
      provider.getTracer("t").startSpan("b").end();
      const bytes = ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!;
      expect(decodeTraceExport(bytes, "protobuf")).toHaveLength(2);
      const proto = await post(bytes, { "content-type": "application/x-protobuf" });
      expect(proto.status).toBe(200);
      expect(proto.headers.get("content-type")).toMatch(/application\/x-protobuf/);
      const answer = new Uint8Array(await proto.arrayBuffer());
      expect(decodeTraceResponse(answer)).toEqual({ rejectedSpans: 2, errorMessage: expect.any(String) });
      await provider.shutdown();
    });

    it("refuses a body it cannot decode (400), another media type (415), a key without traces:write (403)", async () => {
      expect(
        (await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), { "content-type": "application/x-protobuf" }))
          .status,
      ).toBe(400);
      expect((await post("{not json", { "content-type": "application/json" })).status).toBe(400);
      expect((await post("x", { "content-type": "application/json", "content-encoding": "gzip" })).status).toBe(400);
      expect((await post("x", { "content-type": "text/plain" })).status).toBe(415);
      const other = await t.issueKey(projectId, PROJECT_SCOPES);
      const refused = await post(JSON.stringify(foreign()), { "content-type": "application/json" }, other);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("INSUFFICIENT_SCOPE");
      expect((await post("{}", { "content-type": "application/json" }, "nope")).status).toBe(401);
    });

    it("refuses an export whose bytes would take its reader's queue past its bound with 429 and Retry-After (OTLP throttling); one within it is read", async () => {
      const one = JSON.stringify(foreign());
      // A queue bound of less than two such exports: the larger one can never fit, the small one always.
      const small = await startTestService({ env: { ASSURE_OTLP_QUEUE_BYTES: String(one.length + 10) } });
      try {
        const p = await seedProject(small, modelAgent.baseUrl);
        const smallKey = await small.issueKey(p.projectId, ["traces:write"]);
        const send = (body: string) =>
          fetch(`${small.baseUrl}/otlp/v1/traces`, {
            method: "POST",
            headers: { authorization: `Bearer ${smallKey}`, "content-type": "application/json" },
            body,
          });
        const two = foreign();
        two.resourceSpans.push(foreign().resourceSpans[0]!);
        const refused = await send(JSON.stringify(two));
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("1");
        expect(await refused.json()).toEqual({
          error: expect.objectContaining({ code: "RATE_LIMITED", retryable: true }),
        });
        const taken = await send(one);
        expect(taken.status).toBe(200);
        expect(await taken.json()).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });
      } finally {
        await small.close();
      }
    });

    it("refuses an export larger than 4 MiB (413)", async () => {
      const big = JSON.stringify({ pad: "x".repeat(5 * 1024 * 1024) });
      expect((await post(big, { "content-type": "application/json" })).status).toBe(413);
      expect(
        (await post(gzipSync(big), { "content-type": "application/json", "content-encoding": "gzip" })).status,
      ).toBe(413);
    });
  });
});
