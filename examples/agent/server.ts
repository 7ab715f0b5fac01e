import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BEHAVIOURS, decide, type Behaviour, type WireMessage } from "./policy.js";

export interface ExampleAgentOptions {
  port?: number;
  host?: string;
  /** How long the `slow` behaviour waits before answering. */
  slowMs?: number;
  /** How long every chat completion takes, as a model's would (default 0). */
  latencyMs?: number;
  /** With the `rate-limited` behaviour: calls beyond this many in flight get 429 with `Retry-After: 1`. */
  acceptInFlight?: number;
}

export interface ExampleAgent {
  baseUrl: string;
  server: Server;
  /** Chat completion requests answered so far. */
  readonly requests: number;
  /** Chat completion requests in flight now, and the most there were at once (since `resetPeak`). */
  readonly inFlight: number;
  readonly peakInFlight: number;
  resetPeak(): void;
  /** Requests answered 429 so far (the `rate-limited` behaviour). */
  readonly throttled: number;
  /** The latest requests (up to 10,000): where they went and whether they carried credentials. */
  readonly calls: readonly AgentCall[];
  /** Adds behaviours to every request from now on (a new version of the agent deployed); none restores it. */
  behave(behaviours: readonly Behaviour[]): void;
  close(): Promise<void>;
}

export interface AgentCall {
  method: string;
  path: string;
  authorization: string | undefined;
}

const MODEL = "refund-agent";
/** `/v1/…`, or under a prefix (`/<sha>/v1/…`), as a preview host routes each deployment by path. */
const ROUTE = /^((?:\/[^/]+)*)\/v1\/(models|chat\/completions)$/;

/** The body of a request, as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

/** `refund-agent+slow+flaky` → the behaviours it names. */
export function behavioursOf(model: unknown): Set<Behaviour> {
  const names = typeof model === "string" ? model.split("+").slice(1) : [];
  return new Set(names.filter((name): name is Behaviour => (BEHAVIOURS as readonly string[]).includes(name)));
}

/**
 * The example agent: an OpenAI-compatible Chat Completions server (`/v1/chat/completions`,
 * `/v1/models`, also under any path prefix) playing a refunds assistant, with misbehaviours for
 * tests and demos.
 */
export async function startExampleAgent({
  port = 0,
  host = "127.0.0.1",
  slowMs = 1500,
  latencyMs = 0,
  acceptInFlight = 4,
}: ExampleAgentOptions = {}): Promise<ExampleAgent> {
  let requests = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  let throttled = 0;
  let flakyCounter = 0;
  let erraticStarts = 0;
  let deployed = new Set<Behaviour>();
  let completionId = 0;
  const calls: AgentCall[] = [];

  async function completions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: { model?: unknown; messages?: WireMessage[] };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      return sendJson(res, 400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
    }
    if (!Array.isArray(body.messages)) {
      return sendJson(res, 400, { error: { message: "messages is required", type: "invalid_request_error" } });
    }
    requests++;
    const behaviours = new Set([...behavioursOf(body.model), ...deployed]);
    // `erratic`: every fourth conversation it starts gets its order id wrong.
    if (behaviours.has("erratic") && !body.messages.some((m) => m.role === "assistant") && erraticStarts++ % 4 === 3) {
      behaviours.add("wrong-arguments");
    }
    if (behaviours.has("rate-limited") && inFlight > acceptInFlight) {
      throttled++;
      res.setHeader("retry-after", "1");
      return sendJson(res, 429, { error: { message: "too many requests", type: "rate_limit_exceeded" } });
    }
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (behaviours.has("slow")) await new Promise((resolve) => setTimeout(resolve, slowMs));
    if (behaviours.has("drop-connection")) return void req.socket.destroy();
    if (behaviours.has("flaky") && flakyCounter++ % 2 === 0) {
      return sendJson(res, 503, { error: { message: "overloaded" } });
    }
    if (behaviours.has("http-500")) return sendJson(res, 500, { error: { message: "internal error" } });
    if (behaviours.has("malformed-json")) return sendJson(res, 200, '{"choices": [ {"message": ');
    if (behaviours.has("no-choices")) return sendJson(res, 200, { id: "x", object: "chat.completion", choices: [] });

    const decision = decide(body.messages, behaviours);
    const id = `call_${++completionId}`;
    const message =
      decision.kind === "reply"
        ? { role: "assistant", content: decision.content }
        : behaviours.has("invalid-tool-calls")
          ? { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: 7 } }] }
          : {
              role: "assistant",
              content: null,
              tool_calls: [{ id, type: "function", function: { name: decision.name, arguments: decision.arguments } }],
            };
    // Tokens as a model would report them, about four characters each.
    const tokensOf = (text: string) => Math.ceil(text.length / 4);
    const prompt = tokensOf(body.messages.map((m) => m.content ?? "").join(""));
    const completion = tokensOf(decision.kind === "reply" ? decision.content : decision.arguments);
    sendJson(res, 200, {
      id: `chatcmpl-${completionId}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === "string" ? body.model : MODEL,
      choices: [{ index: 0, message, finish_reason: decision.kind === "reply" ? "stop" : "tool_calls" }],
      ...(behaviours.has("no-usage")
        ? {}
        : { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }),
    });
  }

  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "/";
    calls.push({ method: req.method ?? "", path, authorization: req.headers.authorization });
    if (calls.length > 10_000) calls.shift();
    const endpoint = ROUTE.exec(path)?.[2];
    if (req.method === "GET" && endpoint === "models") {
      return sendJson(res, 200, {
        object: "list",
        data: [{ id: MODEL, object: "model", owned_by: "assure-examples" }],
      });
    }
    if (req.method === "POST" && endpoint === "chat/completions") {
      peakInFlight = Math.max(peakInFlight, ++inFlight);
      res.once("close", () => inFlight--);
      completions(req, res).catch(() => res.destroy());
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${address.port}/v1`,
    server,
    get requests() {
      return requests;
    },
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peakInFlight;
    },
    resetPeak() {
      peakInFlight = inFlight;
    },
    behave(behaviours) {
      deployed = new Set(behaviours);
      erraticStarts = 0; // a new deployment errs from its own fourth conversation on
    },
    get throttled() {
      return throttled;
    },
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
