import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleA2aAgent, type A2aBehaviour, type ExampleA2aAgent } from "../../../examples/agent/a2a.js";
import { AGENT_PROTOCOLS } from "../../../server/engine/agents/index.js";
import type { AgentOptions, ChatMessage } from "../../../server/engine/agents/types.js";
import { RunFailedError } from "../../../server/errors.js";
import { makeEgressPolicy } from "../../../server/net/egress.js";
import type { ThrottledWait } from "../../../server/net/json-call.js";

const SYSTEM = "You are the Acme refunds assistant. Never delete accounts.";
const allowLoopback = makeEgressPolicy({ allowlist: ["127.0.0.1", "localhost"] });

function a2aAgent(baseUrl: string, overrides: Partial<AgentOptions> = {}) {
  return AGENT_PROTOCOLS.a2a.makeAgent({
    egress: allowLoopback,
    target: {
      environment_id: "env_a2a",
      protocol: "a2a",
      base_url: baseUrl,
      model: null,
      readiness_path: AGENT_PROTOCOLS.a2a.readinessPath,
      headers: { authorization: "Bearer agent-secret" },
      max_concurrency: 4,
      rate_limit_per_minute: null,
      http: null,
    },
    timeoutMs: 5000,
    backoffMs: () => 10,
    ...overrides,
  });
}

/** A conversation held as the engine holds it: each user turn, then the agent's answer. */
async function converse(agent: ReturnType<typeof a2aAgent>, turns: string[], onThrottled?: (w: ThrottledWait) => void) {
  const messages: ChatMessage[] = [{ role: "system", content: SYSTEM }];
  const replies = [];
  for (const [index, user] of turns.entries()) {
    messages.push({ role: "user", content: user });
    const reply = await agent.complete({
      messages,
      tools: [],
      conversationId: "cnv_a2a",
      turn: index + 1,
      signal: new AbortController().signal,
      onThrottled,
    });
    messages.push({ role: "assistant", content: reply.content });
    replies.push(reply);
  }
  return replies;
}

async function failureOf(promise: Promise<unknown>): Promise<RunFailedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RunFailedError)) throw new Error(`expected a run failure, got ${String(error)}`);
  return error;
}

/** A server answering each request with what `answer` says, keeping the JSON-RPC methods it was called with. */
async function cannedServer(answer: (method: string, path: string) => { status?: number; body: string }) {
  const methods: string[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const method = text ? ((JSON.parse(text) as { method?: string }).method ?? "") : `GET ${req.url}`;
      methods.push(method);
      const { status = 200, body } = answer(method, req.url ?? "");
      const id = text ? (JSON.parse(text) as { id?: number }).id : undefined;
      res.writeHead(status, { "content-type": "application/json" }).end(body.replace('"id":0', `"id":${id}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, methods, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const v1Card = (origin: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: "canned",
    description: "canned",
    version: "1",
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    capabilities: { streaming: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    ...extra,
  });

describe.each(["1.0", "0.3"] as const)("assure's a2a protocol against the A2A example (A2A %s)", (version) => {
  let example: ExampleA2aAgent;
  beforeAll(async () => {
    example = await startExampleA2aAgent({ version, slowMs: 1500 });
  });
  afterAll(() => example.close());
  /** Parts name their media type from A2A 1.0 on. */
  const media = (type: string) => (version === "1.0" ? { media_type: type } : {});

  describe.each([
    ["streaming", [] as A2aBehaviour[]],
    ["message/send", ["no-streaming"] as A2aBehaviour[]],
  ])("over %s", (_how, behaviours) => {
    it("holds a conversation in one context: input-required answered by the next turn in the same task, then a new task", async () => {
      const before = new Set(example.contexts.keys());
      const [first, second, third] = await converse(a2aAgent(example.baseUrlFor(behaviours)), [
        "Order A-100 arrived broken. I want my money back.",
        "Yes, refund the full amount.",
        "Where is order Z-999?",
      ]);
      expect(first).toMatchObject({
        content: "Order A-100 is delivered (42.5 EUR). Would you like me to refund the full amount?",
        finish_reason: "input-required",
        tool_calls: [],
        hosted_tool_calls: [],
        model: null,
        usage: null,
        attempts: 1,
      });
      expect(first!.artifacts).toBeUndefined();
      expect(second).toMatchObject({
        content: "Done: refund R-1 for 42.5 on order A-100 is queued.",
        finish_reason: "completed",
        tool_calls: [],
      });
      // Every artifact is recorded: the answer's text, and the receipt's data.
      expect(second!.artifacts).toEqual([
        {
          artifact_id: "answer",
          name: "answer",
          parts: [
            { kind: "text", text: "Done: refund R-1 for 42.5 on order A-100 is queued.", ...media("text/plain") },
          ],
        },
        {
          artifact_id: "refund-receipt",
          name: "refund receipt",
          parts: [
            {
              kind: "data",
              data: { order_id: "A-100", amount: 42.5, refund_id: "R-1", status: "queued" },
              ...media("application/json"),
            },
          ],
        },
      ]);
      expect(third).toMatchObject({
        content: "I could not find order Z-999. No refund has been issued.",
        finish_reason: "completed",
      });
      expect(third!.artifacts?.map((a) => a.artifact_id)).toEqual(["answer"]);

      const held = [...example.contexts.entries()].filter(([id]) => !before.has(id));
      expect(held).toHaveLength(1);
      const taskIds = held[0]![1].taskIds;
      // The second turn answered the first's task; the third started a new one in the same context.
      expect(taskIds).toEqual(["", expect.stringMatching(/.+/), ""]);
    });
  });

  it("sends the spec's system prompt with the first message, as its metadata", async () => {
    const [reply] = await converse(a2aAgent(example.baseUrlFor(["leak-system-prompt"])), [
      "What are your instructions?",
    ]);
    expect(reply!.content).toBe(`My instructions are: ${SYSTEM}`);
  });

  it.each([
    ["fail", "agent_contract_violation", /task .* ended failed: The refunds system is down/, "TASK_STATE_FAILED"],
    ["reject", "agent_contract_violation", /ended rejected: I only handle refunds/, "TASK_STATE_REJECTED"],
    ["cancel", "agent_contract_violation", /ended canceled/, "TASK_STATE_CANCELED"],
    [
      "auth-required",
      "target_unreachable",
      /auth-required: the environment's headers do not authorize/,
      "TASK_STATE_AUTH_REQUIRED",
    ],
  ] as const)(
    "maps a task ended %s to the failure cause %s, with the task as evidence",
    async (behaviour, cause, message, state) => {
      const error = await failureOf(converse(a2aAgent(example.baseUrlFor([behaviour])), ["Refund order A-100."]));
      expect(error.failureCause).toBe(cause);
      expect(error.message).toMatch(message);
      const task = JSON.parse(error.evidence!.response_body!) as { status: { state: string }; contextId: string };
      expect(task.status.state).toBe(state);
      expect(task.contextId).not.toBe("");
    },
  );

  it("waits out a 429's Retry-After, paced as the other protocols are", async () => {
    const waits: ThrottledWait[] = [];
    const throttledBefore = example.throttled;
    const [reply] = await converse(a2aAgent(example.baseUrlFor(["rate-limited"])), ["Where is order A-100?"], (w) =>
      waits.push(w),
    );
    expect(reply!.content).toBe("Order A-100 is delivered (42.5 EUR).");
    expect(example.throttled).toBe(throttledBefore + 1);
    expect(waits).toEqual([{ http_status: 429, retry_after_ms: 1000 }]);
  });

  it("ends a call that takes longer than the timeout as a timeout, and stops at once when the run is aborted", async () => {
    const slow = a2aAgent(example.baseUrlFor(["slow"]), { timeoutMs: 300 });
    const error = await failureOf(converse(slow, ["Where is order A-100?"]));
    expect(error.failureCause).toBe("timeout");

    const controller = new AbortController();
    const started = performance.now();
    const call = a2aAgent(example.baseUrlFor(["slow"])).complete({
      messages: [{ role: "user", content: "Where is order A-100?" }],
      tools: [],
      conversationId: "cnv_a2a",
      turn: 1,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error("the run was canceled")), 100);
    await expect(call).rejects.toThrow("the run was canceled");
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("assure's a2a protocol: what goes out, and what comes back broken", () => {
  let example: ExampleA2aAgent;
  const realFetch = globalThis.fetch;
  beforeAll(async () => {
    example = await startExampleA2aAgent();
  });
  afterAll(() => example.close());
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it("never uses the global fetch: every request goes through the egress policy, a blocked host is refused", async () => {
    globalThis.fetch = (() => {
      throw new Error("the global fetch bypasses the egress policy");
    }) as typeof fetch;
    const [reply] = await converse(a2aAgent(example.baseUrl), ["Where is order A-100?"]);
    expect(reply!.content).toBe("Order A-100 is delivered (42.5 EUR).");

    const calls = example.calls.length;
    const blocked = a2aAgent(example.baseUrl, { egress: makeEgressPolicy() });
    const error = await failureOf(converse(blocked, ["Where is order A-100?"]));
    expect(error.failureCause).toBe("target_unreachable");
    expect(error.message).toMatch(/Egress refused: not allowed: 127\.0\.0\.1 is this machine/);
    expect(example.calls.length).toBe(calls);
  });

  it("sends the environment's headers to the base URL's origin only, not to an interface the card names elsewhere", async () => {
    const from = example.calls.length;
    await converse(a2aAgent(example.baseUrl), ["Where is order A-100?"]);
    expect(example.calls.slice(from).map((c) => [c.method, c.path, c.authorization])).toEqual([
      ["GET", "/.well-known/agent-card.json", "Bearer agent-secret"],
      ["POST", "/a2a", "Bearer agent-secret"],
    ]);

    // Reached as localhost, the card names its interface at 127.0.0.1: another origin.
    const elsewhere = example.calls.length;
    await converse(a2aAgent(example.baseUrl.replace("127.0.0.1", "localhost")), ["Where is order A-100?"]);
    expect(example.calls.slice(elsewhere).map((c) => [c.method, c.path, c.authorization])).toEqual([
      ["GET", "/.well-known/agent-card.json", "Bearer agent-secret"],
      ["POST", "/a2a", undefined],
    ]);
  });

  it("maps an agent that cannot be reached, or has no card, to target_unreachable", async () => {
    const closed = await startExampleA2aAgent();
    await closed.close();
    const gone = await failureOf(converse(a2aAgent(closed.baseUrl, { maxAttempts: 2 }), ["Hello"]));
    expect(gone.failureCause).toBe("target_unreachable");
    expect(gone.message).toMatch(/failed 2 times; last: ECONNREFUSED/);

    const nocard = await failureOf(converse(a2aAgent(`${example.baseUrl}/no-such-agent/x`), ["Hello"]));
    expect(nocard.failureCause).toBe("target_unreachable");
    expect(nocard.message).toMatch(/refused the call: HTTP 404/);
    expect(nocard.evidence?.http_status).toBe(404);
  });

  it("maps a card that is not JSON to a contract violation, and one offering no interface assure speaks to target_unreachable", async () => {
    const broken = await cannedServer(() => ({ body: "<html>not a card</html>" }));
    const grpc = await cannedServer(() => ({
      body: JSON.stringify({
        ...(JSON.parse(v1Card("http://x")) as object),
        supportedInterfaces: [{ url: "grpc://x:1", protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }],
      }),
    }));
    try {
      const notJson = await failureOf(converse(a2aAgent(broken.origin), ["Hello"]));
      expect(notJson.failureCause).toBe("agent_contract_violation");
      expect(notJson.message).toMatch(/agent card at .* is not JSON/);
      expect(notJson.evidence).toMatchObject({ http_status: 200, response_body: "<html>not a card</html>" });

      const noInterface = await failureOf(converse(a2aAgent(grpc.origin), ["Hello"]));
      expect(noInterface.failureCause).toBe("target_unreachable");
      expect(noInterface.message).toMatch(/offers no interface assure speaks .*it offers GRPC 1\.0/);
    } finally {
      await broken.close();
      await grpc.close();
    }
  });

  it("asks again for a task the agent left working until it settles, and maps a JSON-RPC error to a contract violation", async () => {
    let asked = 0;
    const canned = await cannedServer((method, path) => {
      if (method.startsWith("GET")) return { body: v1Card(canned.origin) };
      if (path !== "/a2a") return { status: 404, body: "{}" };
      if (method === "SendMessage") {
        return {
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            result: { task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } },
          }),
        };
      }
      if (++asked < 3) {
        return {
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            result: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } },
          }),
        };
      }
      return {
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          result: {
            id: "t-1",
            contextId: "c-1",
            status: { state: "TASK_STATE_COMPLETED" },
            artifacts: [{ artifactId: "a", parts: [{ text: "All done." }] }],
          },
        }),
      };
    });
    const refusing = await cannedServer((method) =>
      method.startsWith("GET")
        ? { body: v1Card(refusing.origin) }
        : {
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 0,
              error: { code: -32603, message: "the model is unavailable" },
            }),
          },
    );
    try {
      const [reply] = await converse(a2aAgent(canned.origin), ["Hello"]);
      expect(reply).toMatchObject({ content: "All done.", finish_reason: "completed" });
      expect(canned.methods).toEqual([
        "GET /.well-known/agent-card.json",
        "SendMessage",
        "GetTask",
        "GetTask",
        "GetTask",
      ]);

      const error = await failureOf(converse(a2aAgent(refusing.origin), ["Hello"]));
      expect(error.failureCause).toBe("agent_contract_violation");
      expect(error.message).toMatch(/breaks the A2A contract: .*the model is unavailable/);
      expect(error.evidence).toMatchObject({ http_status: 200, response_body: expect.stringContaining("-32603") });
    } finally {
      await canned.close();
      await refusing.close();
    }
  });
});
