import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import {
  A2A_VERSION_HEADER,
  formatSSEErrorEvent,
  formatSSEEvent,
  Role,
  SSE_HEADERS,
  TaskState,
  type AgentCard,
  type Message,
  type Part,
  type Task,
} from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  UnauthenticatedUser,
  validateVersion,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { mcpTools, type RunTool } from "./mcp-tools.js";
import { runTool } from "./orders.js";
import { decide, type Behaviour, type WireMessage } from "./policy.js";
import { readBody, type AgentCall } from "./server.js";

/**
 * Misbehaviours of the A2A example, named in its base URL's path (`/fail`, `/rate-limited+slow`):
 * a task ended failed, rejected, canceled or auth-required; a 429 with `Retry-After: 1` before
 * each message is taken; a slow answer; a card that does not stream; and the policy's own
 * (`wrong-arguments`, `leak-system-prompt`, …).
 */
export const A2A_BEHAVIOURS = [
  "fail",
  "reject",
  "cancel",
  "auth-required",
  "rate-limited",
  "slow",
  "no-streaming",
  "wrong-arguments",
  "leak-system-prompt",
  "hostile",
] as const;
export type A2aBehaviour = (typeof A2A_BEHAVIOURS)[number];

export interface ExampleA2aAgentOptions {
  port?: number;
  host?: string;
  /** The A2A version it speaks: 1.0 (the SDK's own), or 0.3 through the SDK's compatibility layer. */
  version?: "1.0" | "0.3";
  /** How long the `slow` behaviour waits before answering. */
  slowMs?: number;
}

export interface ExampleA2aAgent {
  /** Its base URL: the card is at `{baseUrl}/.well-known/agent-card.json`. */
  baseUrl: string;
  /** The base URL of the agent with these misbehaviours. */
  baseUrlFor(behaviours: readonly A2aBehaviour[]): string;
  server: Server;
  version: "1.0" | "0.3";
  /** Messages sent to it (JSON-RPC calls taken, 429s aside). */
  readonly requests: number;
  /** Calls answered 429 (the `rate-limited` behaviour). */
  readonly throttled: number;
  /** The latest requests (up to 10,000): where they went and whether they carried credentials. */
  readonly calls: readonly AgentCall[];
  /** The contexts it has held, each with its user messages' task ids (empty: a new task). */
  readonly contexts: ReadonlyMap<string, { taskIds: string[] }>;
  close(): Promise<void>;
}

const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});
const dataPart = (data: unknown): Part => ({
  content: { $case: "data", value: data },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});
const agentMessage = (text: string, taskId: string, contextId: string): Message => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const textOf = (message: Message) =>
  message.parts.flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : [])).join("");

const ENDINGS: Partial<Record<A2aBehaviour, [TaskState, string]>> = {
  fail: [TaskState.TASK_STATE_FAILED, "The refunds system is down."],
  reject: [TaskState.TASK_STATE_REJECTED, "I only handle refunds for Acme orders."],
  cancel: [TaskState.TASK_STATE_CANCELED, "This request was canceled."],
  "auth-required": [TaskState.TASK_STATE_AUTH_REQUIRED, "Sign in to the refunds system first."],
};

/**
 * Runs the policy until it answers in text, running each tool it calls; undefined if the task was
 * canceled meanwhile. A refund's receipts are kept for an artifact.
 */
async function takeTurn(
  history: WireMessage[],
  behaviours: ReadonlySet<A2aBehaviour>,
  run: RunTool,
  isCanceled: () => boolean,
): Promise<{ answer: string; receipts: Record<string, unknown>[] } | undefined> {
  const receipts: Record<string, unknown>[] = [];
  for (let step = 0; step < 8; step++) {
    if (isCanceled()) return undefined;
    const decision = decide(history, behaviours as ReadonlySet<string> as ReadonlySet<Behaviour>);
    if (decision.kind === "reply") return { answer: decision.content, receipts };
    const id = `call_${randomUUID().slice(0, 8)}`;
    let args: Record<string, unknown> = {};
    try {
      args = JSON.parse(decision.arguments) as Record<string, unknown>;
    } catch {
      // the policy's bad-arguments-json: the tool gets nothing
    }
    const result = await run(decision.name, args);
    if (decision.name === "issue_refund") receipts.push({ ...args, ...result });
    history.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: decision.name, arguments: decision.arguments } }],
    });
    history.push({ role: "tool", tool_call_id: id, content: JSON.stringify(result) });
  }
  return { answer: "I could not finish that.", receipts };
}

/**
 * The refunds assistant as an A2A `AgentExecutor`: the same policy as the other dialects, but it
 * runs the refund spec's tools itself (against a small orders table, or at the MCP URL a message's
 * metadata names: `mcp_url`), keeps each context's
 * conversation, asks for confirmation in a task that needs input, and ends a task with its answer
 * as a text artifact (and a refund's receipt as a data artifact).
 */
function refundsExecutor(
  contexts: Map<string, { history: WireMessage[]; taskIds: string[] }>,
  behaviours: ReadonlySet<A2aBehaviour>,
): AgentExecutor {
  const canceled = new Set<string>();
  return {
    async execute(request: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId, userMessage } = request;
      const held = contexts.get(contextId) ?? { history: [], taskIds: [] };
      contexts.set(contextId, held);
      held.taskIds.push(request.task?.id ?? "");
      const system = userMessage.metadata?.system;
      if (held.history.length === 0 && typeof system === "string") {
        held.history.push({ role: "system", content: system });
      }
      held.history.push({ role: "user", content: textOf(userMessage) });

      const status = (state: TaskState, text?: string) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: {
              state,
              message: text === undefined ? undefined : agentMessage(text, taskId, contextId),
              timestamp: new Date().toISOString(),
            },
            metadata: undefined,
          }),
        );
      const task: Task = request.task ?? {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const ending = [...behaviours].map((b) => ENDINGS[b]).find(Boolean);
      if (ending) {
        status(ending[0], ending[1]);
        return bus.finished();
      }
      status(TaskState.TASK_STATE_WORKING, "Looking into it.");

      // Given an MCP URL (assure's mocks of the spec's tools), it runs its tools there.
      const mcpUrl = userMessage.metadata?.mcp_url;
      const mcp = typeof mcpUrl === "string" ? await mcpTools(mcpUrl) : undefined;
      let outcome;
      try {
        outcome = await takeTurn(
          held.history,
          behaviours,
          mcp ? mcp.run : async (name, args) => runTool(name, args),
          () => canceled.has(taskId),
        );
      } finally {
        await mcp?.close();
      }
      if (!outcome) return bus.finished();
      const { answer, receipts } = outcome;
      held.history.push({ role: "assistant", content: answer });

      if (/would you like me to/i.test(answer)) {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, answer);
        return bus.finished();
      }
      const artifact = (artifactId: string, name: string, parts: Part[]) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: { artifactId, name, description: "", parts, metadata: undefined, extensions: [] },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
      artifact("answer", "answer", [textPart(answer)]);
      if (receipts.length > 0) artifact("refund-receipt", "refund receipt", receipts.map(dataPart));
      status(TaskState.TASK_STATE_COMPLETED);
      bus.finished();
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      canceled.add(taskId);
      bus.finished();
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
    .end(text);
}

const ROUTE = /^((?:\/[^/]+)*)\/(\.well-known\/agent-card\.json|a2a)$/;

/**
 * The refunds assistant over A2A, built on the official SDK's server side (its request handler,
 * task store and JSON-RPC transport handler) behind a plain `node:http` server: the SDK's own
 * adapters need Express, its transport handlers do not. `version: "0.3"` serves an A2A 0.3 card and
 * speaks 0.3 through the SDK's compatibility layer.
 */
export async function startExampleA2aAgent({
  port = 0,
  host = "127.0.0.1",
  version = "1.0",
  slowMs = 1500,
}: ExampleA2aAgentOptions = {}): Promise<ExampleA2aAgent> {
  const contexts = new Map<string, { history: WireMessage[]; taskIds: string[] }>();
  const calls: AgentCall[] = [];
  let requests = 0;
  let throttled = 0;
  let origin = "";
  // One request handler (and task store) per misbehaviour path: each is an agent of its own.
  const agents = new Map<
    string,
    {
      card: unknown;
      handler: JsonRpcTransportHandler | LegacyJsonRpcTransportHandler;
      core: AgentCard;
      /** `rate-limited`: whether the next request is answered 429 (every other one is). */
      throttleNext: boolean;
    }
  >();

  function agentAt(prefix: string) {
    const known = agents.get(prefix);
    if (known) return known;
    const behaviours = behavioursOf(prefix);
    if (!behaviours) return undefined;
    const url = `${origin}${prefix}/a2a`;
    const streaming = !behaviours.has("no-streaming");
    const about = {
      name: "Acme refunds assistant",
      description: "Looks up orders and refunds them, after asking.",
      version: "1.4.2",
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain", "application/json"],
    };
    const skill = {
      id: "refunds",
      name: "Refunds",
      description: "Refund an order, fully or partly",
      tags: ["refunds"],
      examples: ["Order A-100 arrived broken. I want my money back."],
    };
    let card: unknown;
    let core: AgentCard;
    if (version === "0.3") {
      card = {
        protocolVersion: "0.3.0",
        ...about,
        url,
        preferredTransport: "JSONRPC",
        capabilities: { streaming, pushNotifications: false },
        skills: [skill],
      };
      // The request handler checks the version a request names (`0.3`) against the card's interfaces.
      const parsed = parseLegacyAgentCard(card);
      core = {
        ...parsed,
        supportedInterfaces: parsed.supportedInterfaces.map((i) => ({ ...i, protocolVersion: "0.3" })),
      };
    } else {
      core = {
        ...about,
        supportedInterfaces: [{ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
        provider: { organization: "assure examples", url: "https://github.com/assure" },
        capabilities: { streaming, pushNotifications: false, extensions: [], extendedAgentCard: false },
        securitySchemes: {},
        securityRequirements: [],
        skills: [{ ...skill, inputModes: [], outputModes: [], securityRequirements: [] }],
        signatures: [],
      };
      card = core;
    }
    const requestHandler = new DefaultRequestHandler(
      core,
      new InMemoryTaskStore(),
      refundsExecutor(contexts, behaviours),
    );
    const handler =
      version === "0.3"
        ? new LegacyJsonRpcTransportHandler(requestHandler)
        : new JsonRpcTransportHandler(requestHandler);
    const agent = { card, handler, core, throttleNext: true };
    agents.set(prefix, agent);
    return agent;
  }

  function behavioursOf(prefix: string): Set<A2aBehaviour> | undefined {
    const names = prefix
      .split("/")
      .filter(Boolean)
      .flatMap((segment) => segment.split("+"));
    if (names.some((name) => !(A2A_BEHAVIOURS as readonly string[]).includes(name))) return undefined;
    return new Set(names as A2aBehaviour[]);
  }

  async function answer(req: IncomingMessage, res: ServerResponse, prefix: string): Promise<void> {
    const agent = agentAt(prefix)!;
    const behaviours = behavioursOf(prefix)!;
    const text = await readBody(req);
    if (behaviours.has("rate-limited") && (agent.throttleNext = !agent.throttleNext) === false) {
      throttled++;
      return sendJson(res, 429, { error: "too many requests" }, { "retry-after": "1" });
    }
    requests++;
    if (behaviours.has("slow")) await new Promise((resolve) => setTimeout(resolve, slowMs));
    const header = req.headers[A2A_VERSION_HEADER.toLowerCase()];
    const requestedVersion = (Array.isArray(header) ? header[0] : header) || undefined;
    const context = new ServerCallContext({
      user: new UnauthenticatedUser(),
      ...(requestedVersion ? { requestedVersion } : {}),
      state: new Map<string, unknown>([["headers", req.headers]]),
    });
    const mapError =
      version === "0.3"
        ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
        : JsonRpcTransportHandler.mapToJSONRPCError;
    let id: unknown = null;
    try {
      id = (JSON.parse(text) as { id?: unknown }).id ?? null;
      validateVersion(context.requestedVersion, agent.core, "JSONRPC");
      const result = await agent.handler.handle(text, context);
      if (!(Symbol.asyncIterator in result)) return sendJson(res, 200, result);
      res.writeHead(200, SSE_HEADERS);
      try {
        for await (const event of result) res.write(formatSSEEvent(event));
      } catch (error) {
        res.write(formatSSEErrorEvent({ jsonrpc: "2.0", id, error: mapError(error) }));
      }
      res.end();
    } catch (error) {
      if (res.headersSent) return void res.end();
      sendJson(res, 200, { jsonrpc: "2.0", id, error: mapError(error) });
    }
  }

  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "/";
    calls.push({ method: req.method ?? "", path, authorization: req.headers.authorization });
    if (calls.length > 10_000) calls.shift();
    const route = ROUTE.exec(path);
    const prefix = route?.[1] ?? "";
    const agent = route ? agentAt(prefix) : undefined;
    if (agent && req.method === "GET" && route![2] !== "a2a") return sendJson(res, 200, agent.card);
    if (agent && req.method === "POST" && route![2] === "a2a") {
      answer(req, res, prefix).catch(() => res.destroy());
      return;
    }
    sendJson(res, 404, { error: `no route ${req.method} ${path}` });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: origin,
    baseUrlFor: (behaviours) => (behaviours.length > 0 ? `${origin}/${behaviours.join("+")}` : origin),
    server,
    version,
    get requests() {
      return requests;
    },
    get throttled() {
      return throttled;
    },
    calls,
    contexts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
