import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { chatCompletions } from "./dialects/chat-completions.js";
import { messages } from "./dialects/messages.js";
import { responses } from "./dialects/responses.js";
import type { Dialect } from "./dialects/types.js";
import { BEHAVIOURS, COMBINED_BEHAVIOURS, decide, type Behaviour } from "./policy.js";

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
  /** The base URL of the OpenAI protocols (`…/v1`). */
  baseUrl: string;
  /** The base URL an environment of that protocol names: the origin for anthropic-messages, else `baseUrl`. */
  baseUrlFor(protocol: string): string;
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
const ROUTE = /^((?:\/[^/]+)*)\/v1\/(models|chat\/completions|responses|messages)$/;

/** The APIs it speaks, by the endpoint each is posted to. */
const DIALECTS: Record<string, Dialect> = {
  "chat/completions": chatCompletions,
  responses,
  messages,
};

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

/** `refund-agent+slow+flaky` → the behaviours it names (`vulnerable` names several). */
export function behavioursOf(model: unknown): Set<Behaviour> {
  const names = (typeof model === "string" ? model.split("+").slice(1) : []).flatMap(
    (name): readonly string[] => COMBINED_BEHAVIOURS[name] ?? [name],
  );
  return new Set(names.filter((name): name is Behaviour => (BEHAVIOURS as readonly string[]).includes(name)));
}

/**
 * The example agent: a refunds assistant, with misbehaviours for tests and demos, that speaks
 * OpenAI Chat Completions (`/v1/chat/completions`), OpenAI Responses (`/v1/responses`) and
 * Anthropic Messages (`/v1/messages`), with `/v1/models`, also under any path prefix. Its base
 * URL is `…/v1` for the OpenAI protocols and the origin (or prefix) for Anthropic's.
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
  // `flaky`: each request body fails the first time it is sent, so every call needs one retry
  // however the calls of concurrent conversations interleave.
  const failedOnce = new Set<string>();
  let erraticStarts = 0;
  let deployed = new Set<Behaviour>();
  let completionId = 0;
  const calls: AgentCall[] = [];

  async function answer(dialect: Dialect, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>;
    const text = await readBody(req);
    try {
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, { error: { message: "body is not a JSON object", type: "invalid_request_error" } });
    }
    const conversation = dialect.conversationOf(body, req.headers);
    if (typeof conversation === "string") {
      return sendJson(res, 400, { error: { message: conversation, type: "invalid_request_error" } });
    }
    requests++;
    const behaviours = new Set([...behavioursOf(body.model), ...deployed]);
    // `erratic`: every fourth conversation it starts gets its order id wrong.
    if (behaviours.has("erratic") && !conversation.some((m) => m.role === "assistant") && erraticStarts++ % 4 === 3) {
      behaviours.add("wrong-arguments");
    }
    if (behaviours.has("rate-limited") && inFlight > acceptInFlight) {
      throttled++;
      res.setHeader("retry-after", "1");
      return sendJson(res, 429, { error: { message: "too many requests", type: "rate_limit_exceeded" } });
    }
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (behaviours.has("slow")) {
      // Given up when the caller goes (or the agent closes): a long wait keeps no timer behind it.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, slowMs);
        res.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed) return;
    }
    if (behaviours.has("drop-connection")) return void req.socket.destroy();
    if (behaviours.has("flaky") && !failedOnce.has(text)) {
      if (failedOnce.size > 10_000) failedOnce.clear();
      failedOnce.add(text);
      return sendJson(res, 503, { error: { message: "overloaded" } });
    }
    if (behaviours.has("http-500")) return sendJson(res, 500, { error: { message: "internal error" } });
    if (behaviours.has("malformed-json")) return sendJson(res, 200, '{"choices": [ {"message": ');
    const serial = ++completionId;
    if (behaviours.has("no-choices")) return sendJson(res, 200, dialect.hollowAnswer(serial));

    const decision = decide(conversation, behaviours);
    // Tokens as a model would report them, about four characters each.
    const tokensOf = (text: string) => Math.ceil(text.length / 4);
    const input = tokensOf(conversation.map((m) => m.content ?? "").join(""));
    const output = tokensOf(decision.kind === "reply" ? decision.content : decision.arguments);
    sendJson(
      res,
      200,
      dialect.answer({
        serial,
        model: typeof body.model === "string" ? body.model : MODEL,
        decision,
        invalidToolCall: behaviours.has("invalid-tool-calls"),
        usage: behaviours.has("no-usage") ? null : { input, output },
      }),
    );
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
    const dialect = req.method === "POST" && endpoint ? DIALECTS[endpoint] : undefined;
    if (dialect) {
      peakInFlight = Math.max(peakInFlight, ++inFlight);
      res.once("close", () => inFlight--);
      answer(dialect, req, res).catch(() => res.destroy());
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${address.port}/v1`,
    baseUrlFor: (protocol) =>
      protocol === "anthropic-messages" ? `http://${host}:${address.port}` : `http://${host}:${address.port}/v1`,
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
