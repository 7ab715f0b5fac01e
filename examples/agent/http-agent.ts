import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mcpTools, type RunTool } from "./mcp-tools.js";
import { runTool } from "./orders.js";
import { decide, type Behaviour, type WireMessage } from "./policy.js";
import { readBody } from "./server.js";
import { startAgentTracing, type AgentTracingOptions, type RequestTrace } from "./agent-tracing.js";

/** What the agent did in a turn: each tool it ran, with what it gave back. */
interface Step {
  type: "tool";
  tool: string;
  args: Record<string, unknown>;
  result: Record<string, unknown>;
}

export interface ExampleHttpAgent {
  baseUrl: string;
  server: Server;
  /** Requests to /chat and /chat/stream so far. */
  readonly requests: number;
  behave(behaviours: readonly Behaviour[]): void;
  close(): Promise<void>;
}

/** Runs the policy until it answers in text, running each tool it calls (itself, or over MCP). */
async function takeTurn(
  history: WireMessage[],
  behaviours: ReadonlySet<Behaviour>,
  runTools: RunTool,
): Promise<{ reply: string; steps: Step[] }> {
  const steps: Step[] = [];
  for (let step = 0; step < 8; step++) {
    const decision = decide(history, behaviours);
    if (decision.kind === "reply") {
      history.push({ role: "assistant", content: decision.content });
      return { reply: decision.content, steps };
    }
    let args: Record<string, unknown>;
    try {
      args = JSON.parse(decision.arguments) as Record<string, unknown>;
    } catch {
      args = { raw: decision.arguments };
    }
    const result = await runTools(decision.name, args);
    const id = `call_${randomUUID()}`;
    history.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: decision.name, arguments: decision.arguments } }],
    });
    history.push({ role: "tool", tool_call_id: id, content: JSON.stringify(result) });
    steps.push({ type: "tool", tool: decision.name, args, result });
  }
  return { reply: "I could not finish that.", steps };
}

/**
 * The example refunds assistant as a deployed agent behind its own JSON API, running its own
 * tools: `POST /chat` with `{ session, text }` answers `{ reply, session, steps }`;
 * `POST /chat/stream` answers the same as server-sent events (the reply in pieces, then the
 * session and steps); `GET /health`. Sessions are kept in memory. With `mcp_url` in the body (or an
 * `x-mcp-url` header) it loads its tools from that MCP server (assure's mocks of the spec's tools)
 * and calls them there. With `traces`, it exports OpenTelemetry spans of the tools it runs itself,
 * joined to the trace of the caller's `traceparent`.
 */
export async function startExampleHttpAgent({
  port = 0,
  host = "127.0.0.1",
  latencyMs = 0,
  traces,
}: {
  port?: number;
  host?: string;
  /** How long each turn takes before its tools run, as a model's would (default 0). */
  latencyMs?: number;
  /** Export a span for each request and each tool it runs (OpenTelemetry, OTLP/HTTP), under the caller's traceparent. */
  traces?: AgentTracingOptions;
} = {}): Promise<ExampleHttpAgent> {
  const tracing = traces ? await startAgentTracing(traces) : undefined;
  const sessions = new Map<string, WireMessage[]>();
  let deployed = new Set<Behaviour>();
  let requests = 0;

  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "/";
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res
        .writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
        .end(text);
    };
    if (req.method === "GET" && path === "/health") return json(200, { ok: true });
    if (req.method !== "POST" || (path !== "/chat" && path !== "/chat/stream")) {
      return json(404, { error: `no route ${req.method} ${path}` });
    }
    void readBody(req).then((text) => {
      let body: { session?: unknown; text?: unknown; system?: unknown; mcp_url?: unknown };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        return json(400, { error: "body is not JSON" });
      }
      if (typeof body.text !== "string") return json(400, { error: "text is required" });
      requests++;
      if (deployed.has("http-500")) return json(500, { error: "internal error" });
      const session = typeof body.session === "string" && sessions.has(body.session) ? body.session : randomUUID();
      const history = sessions.get(session) ?? [];
      if (history.length === 0 && typeof body.system === "string") {
        history.push({ role: "system", content: body.system });
      }
      sessions.set(session, history);
      history.push({ role: "user", content: body.text });
      const header = req.headers["x-mcp-url"];
      const mcpUrl = typeof body.mcp_url === "string" ? body.mcp_url : typeof header === "string" ? header : undefined;
      const trace = tracing?.request(req.headers);
      void answer(history, mcpUrl, trace)
        .finally(() => trace?.end())
        .then(
          ({ reply, steps }) => respond(reply, session, steps),
          (error: unknown) => json(502, { error: `tools: ${error instanceof Error ? error.message : String(error)}` }),
        );
    });
    function respond(reply: string, session: string, steps: Step[]) {
      if (path === "/chat") return json(200, { reply, session, steps });
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const piece of reply.match(/.{1,16}/gs) ?? []) res.write(`data: ${JSON.stringify({ delta: piece })}\n\n`);
      res.write(`event: done\ndata: ${JSON.stringify({ session, steps })}\n\n`);
      res.end("data: [DONE]\n\n");
    }
  });

  async function answer(history: WireMessage[], mcpUrl: string | undefined, trace: RequestTrace | undefined) {
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (!mcpUrl) {
      return takeTurn(history, deployed, async (name, args) =>
        trace ? trace.tool(name, args, () => runTool(name, args)) : runTool(name, args),
      );
    }
    const tools = await mcpTools(mcpUrl);
    try {
      return await takeTurn(history, deployed, tools.run);
    } finally {
      await tools.close();
    }
  }
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${address.port}`,
    server,
    get requests() {
      return requests;
    },
    behave(behaviours) {
      deployed = new Set(behaviours);
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await tracing?.shutdown();
    },
  };
}
