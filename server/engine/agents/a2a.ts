import { randomUUID } from "node:crypto";
import {
  A2A_PROTOCOL_VERSION,
  Artifact as ArtifactCodec,
  Role,
  Task as TaskCodec,
  TaskState,
  type AgentCard,
  type Artifact,
  type Message,
  type Part,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { isLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import type { AgentArtifact } from "../../contract/index.js";
import { coerceError, RunFailedError } from "../../errors.js";
import { exchangeWithRetries, type ThrottledWait } from "../../net/json-call.js";
import { endpointUrl, withHeaders } from "./agent-call.js";
import type { Agent, AgentOptions, AgentProtocol, AgentReply } from "./types.js";

/**
 * The message metadata key under which each message carries the conversation's MCP URL (the spec's
 * tools, answered from its mocks), when the service has a public base URL to build it from.
 */
export const MCP_URL_METADATA_KEY = "mcp_url";
/** Where an A2A agent publishes its card, under its base URL. */
const CARD_PATH = "/.well-known/agent-card.json";
/** Evidence kept of an answer: at most this much of its body. */
const EVIDENCE_LIMIT = 64 * 1024;
/** A file part's bytes are recorded when they are at most this many. */
const INLINE_FILE_LIMIT = 64 * 1024;
/** Polling a task left working: first wait, and the longest. */
const POLL_FIRST_MS = 50;
const POLL_MAX_MS = 1000;

const truncate = (text: string) =>
  text.length > EVIDENCE_LIMIT ? `${text.slice(0, EVIDENCE_LIMIT)}…[truncated]` : text;

/** A task state as A2A's JSON names it in 0.3 (`input-required`), which is what assure records. */
const STATE_NAMES: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: "submitted",
  [TaskState.TASK_STATE_WORKING]: "working",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_FAILED]: "failed",
  [TaskState.TASK_STATE_CANCELED]: "canceled",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "input-required",
  [TaskState.TASK_STATE_REJECTED]: "rejected",
  [TaskState.TASK_STATE_AUTH_REQUIRED]: "auth-required",
};
const stateName = (state: TaskState | undefined) =>
  state === undefined ? "unspecified" : (STATE_NAMES[state] ?? "unspecified");
const isUnfinished = (state: TaskState | undefined) =>
  state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING;

/** The last answer the agent gave in this turn: the evidence when what it said breaks the protocol. */
interface Exchange {
  url: string;
  status: number;
  body: string;
}

/** What one user turn has used of the agent so far. */
interface TurnState {
  signal: AbortSignal;
  /** The call's W3C trace context, sent with each of its requests. */
  traceparent: string | undefined;
  onThrottled: ((wait: ThrottledWait) => void) | undefined;
  /** The most attempts any exchange of the turn took. */
  attempts: number;
  /**
   * How long the agent took to answer, in ms: each exchange's answered attempt, and the waits
   * while its task was still working (not the waits it asked for, nor backoff after errors).
   */
  latencyMs: number;
  last: Exchange | undefined;
}

function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => (record[name] = value));
  return record;
}

function toHeaders(incoming: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}

/**
 * The `fetch` the A2A SDK is given: every request it makes goes out through the service's egress
 * policy (`sendOutbound`, addresses checked at connect time, no redirects followed), paced with
 * every other call to this agent, retried as the other protocols' calls are (transient errors,
 * Retry-After), within the call timeout and the run's abort signal. The environment's headers go
 * only to the base URL's origin: a card naming an interface elsewhere gets no credentials. What
 * cannot be recovered from ends the call as a run failure with its cause; any other answer is
 * handed to the SDK.
 */
function makeEgressFetch(options: AgentOptions, turn: () => TurnState): typeof fetch {
  const { egress, target, timeoutMs, maxAttempts, backoffMs, pacer, deadline, now } = options;
  const origin = new URL(target.base_url).origin;
  return async (input, init) => {
    const state = turn();
    const raw = input instanceof Request ? input.url : String(input);
    const url = new URL(raw, `${target.base_url.replace(/\/+$/, "")}/`);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new RunFailedError(
        "target_unreachable",
        `The agent card names ${url.href}: assure reaches agents over HTTP(S) only`,
      );
    }
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST") throw new Error(`assure does not send ${method} requests to agents`);
    if (init?.body !== undefined && init.body !== null && typeof init.body !== "string") {
      throw new Error("the A2A client gave a request body that is not text");
    }
    const own = { ...headerRecord(init?.headers), ...(state.traceparent ? { traceparent: state.traceparent } : {}) };
    const headers = url.origin === origin ? withHeaders(own, target.headers) : own;
    const signal =
      init?.signal && init.signal !== state.signal ? AbortSignal.any([init.signal, state.signal]) : state.signal;
    const outcome = await exchangeWithRetries(egress, {
      url,
      method,
      headers,
      body: init?.body ?? undefined,
      timeoutMs,
      signal,
      pacer,
      onThrottled: state.onThrottled,
      deadline,
      ...(now ? { now } : {}),
      ...(maxAttempts ? { maxAttempts } : {}),
      ...(backoffMs ? { backoffMs } : {}),
    });
    switch (outcome.kind) {
      case "unreachable":
        throw new RunFailedError("target_unreachable", `The agent ${outcome.message}`);
      case "timeout":
        throw new RunFailedError("timeout", `The agent did not answer: ${outcome.message}`);
      case "answered":
        break;
    }
    const { response, attempts } = outcome;
    state.attempts = Math.max(state.attempts, attempts);
    state.latencyMs += response.elapsedMs;
    state.last = { url: url.href, status: response.status, body: truncate(response.body.toString("utf8")) };
    if (response.status < 200 || response.status >= 300) {
      throw new RunFailedError(
        "target_unreachable",
        `The agent at ${url.href} refused the call: HTTP ${response.status}`,
        {
          http_status: response.status,
          response_body: state.last.body,
        },
      );
    }
    const empty = response.status === 204 || response.status === 205;
    return new Response(empty ? null : new Uint8Array(response.body), {
      status: response.status,
      headers: toHeaders(response.headers),
    });
  };
}

/** An artifact as assure records it. */
function recordedArtifact(artifact: Artifact): AgentArtifact {
  return {
    artifact_id: artifact.artifactId,
    ...(artifact.name ? { name: artifact.name } : {}),
    ...(artifact.description ? { description: artifact.description } : {}),
    parts: artifact.parts.flatMap((part): AgentArtifact["parts"] => {
      const media = part.mediaType ? { media_type: part.mediaType } : {};
      const content = part.content;
      switch (content?.$case) {
        case "text":
          return [{ kind: "text", text: content.value, ...media }];
        case "data":
          return [{ kind: "data", data: content.value ?? null, ...media }];
        case "url":
          return [
            { kind: "file", url: content.value, ...media, ...(part.filename ? { filename: part.filename } : {}) },
          ];
        case "raw":
          return [
            {
              kind: "file",
              size_bytes: content.value.length,
              ...(content.value.length <= INLINE_FILE_LIMIT ? { bytes_base64: content.value.toString("base64") } : {}),
              ...media,
              ...(part.filename ? { filename: part.filename } : {}),
            },
          ];
        default:
          return [];
      }
    }),
    ...(artifact.metadata ? { metadata: artifact.metadata } : {}),
  };
}

const textOf = (parts: readonly Part[]) =>
  parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : [])).join("");

/** A task as the stream's events build it: the latest snapshot, its status and its artifacts (appended in chunks). */
function applyEvent(task: Task | undefined, event: StreamResponse): Task | undefined {
  const payload = event.payload;
  const blank = (id: string, contextId: string): Task => ({
    id,
    contextId,
    status: undefined,
    artifacts: [],
    history: [],
    metadata: undefined,
  });
  switch (payload?.$case) {
    case "task":
      return payload.value;
    case "statusUpdate": {
      const next = task ?? blank(payload.value.taskId, payload.value.contextId);
      return { ...next, status: payload.value.status };
    }
    case "artifactUpdate": {
      const next = task ?? blank(payload.value.taskId, payload.value.contextId);
      const artifact = payload.value.artifact;
      if (!artifact) return next;
      const index = next.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
      const artifacts = [...next.artifacts];
      if (index < 0) artifacts.push(artifact);
      else if (payload.value.append) {
        artifacts[index] = { ...artifacts[index]!, parts: [...artifacts[index]!.parts, ...artifact.parts] };
      } else artifacts[index] = artifact;
      return { ...next, artifacts };
    }
    default:
      return task;
  }
}

const isMessage = (result: Message | Task): result is Message => "messageId" in result;

/**
 * An agent reached over A2A (Agent2Agent) through the official SDK: its card read from
 * `{base_url}/.well-known/agent-card.json` (A2A 1.0, or 0.3 through the SDK's compatibility layer,
 * decided by the card's shape and protocol version), each user turn sent as one message (streamed
 * when the card says it streams), the context the agent gives kept for the conversation, and a task
 * that needs input answered by the next turn. The agent runs its own tools.
 */
function makeA2aAgent(options: AgentOptions): Agent {
  const { target, timeoutMs } = options;
  let turn: TurnState | undefined;
  const fetchImpl = makeEgressFetch(options, () => {
    if (!turn) throw new Error("an A2A request outside a turn");
    return turn;
  });
  let client: { client: Client; card: AgentCard } | undefined;
  let contextId: string | undefined;
  /** A task of the agent waiting for the user's input: the next turn answers it. */
  let openTaskId: string | undefined;
  /** Artifacts recorded so far (task and artifact id → JSON), so each is recorded once until it changes. */
  const recorded = new Map<string, string>();

  const violation = (message: string, evidence?: { response_body: string }) =>
    new RunFailedError("agent_contract_violation", `The agent's answer breaks the A2A contract: ${message}`, {
      ...(turn?.last ? { http_status: turn.last.status, response_body: turn.last.body } : {}),
      ...evidence,
    });

  async function connect(signal: AbortSignal): Promise<{ client: Client; card: AgentCard }> {
    const cardUrl = endpointUrl(target.base_url, CARD_PATH);
    const response = await fetchImpl(cardUrl, { headers: { "A2A-Version": A2A_PROTOCOL_VERSION }, signal });
    let raw: unknown;
    try {
      raw = await response.json();
    } catch {
      throw violation(`the agent card at ${cardUrl} is not JSON`);
    }
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
      throw violation(`the agent card at ${cardUrl} is not an object`);
    }
    // The client (and the JOSE library it brings) is loaded when an A2A agent is first called: a
    // process that tests agents of other protocols (assure test) starts without it.
    const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } =
      await import("@a2a-js/sdk/client");
    const legacyCompat = { enabled: true };
    const cardResolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat });
    const factory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl, legacyCompat }),
      ],
      cardResolver,
    });
    let card: AgentCard;
    try {
      card = cardResolver.normalizeAgentCard(raw);
    } catch (error) {
      throw violation(
        `the agent card at ${cardUrl} cannot be read (${isLegacyAgentCard(raw) ? "A2A 0.3" : "A2A 1.0"}): ${coerceError(error).message}`,
      );
    }
    if (!Array.isArray(card.supportedInterfaces) || card.supportedInterfaces.length === 0) {
      throw violation(`the agent card at ${cardUrl} names no interface to reach the agent at`);
    }
    try {
      return { client: await factory.createFromAgentCard(card), card };
    } catch (error) {
      const offered = card.supportedInterfaces
        .map((i) => `${i.protocolBinding} ${i.protocolVersion || "?"}`)
        .join(", ");
      throw new RunFailedError(
        "target_unreachable",
        `The agent card at ${cardUrl} offers no interface assure speaks (JSONRPC or HTTP+JSON, A2A 1.0 or 0.3); it offers ${offered}: ${coerceError(error).message}`,
      );
    }
  }

  /** Sends one message and gives what the agent ended the exchange with: a message, or a task in a settled state. */
  async function send(
    { client: a2a, card }: { client: Client; card: AgentCard },
    request: SendMessageRequest,
    signal: AbortSignal,
  ): Promise<Message | Task> {
    let result: Message | Task | undefined;
    if (card.capabilities?.streaming) {
      let task: Task | undefined;
      let message: Message | undefined;
      for await (const event of a2a.sendMessageStream(request, { signal })) {
        if (event.payload?.$case === "message") message = event.payload.value;
        else task = applyEvent(task, event);
      }
      result = task ?? message;
    } else {
      result = await a2a.sendMessage(request, { signal });
    }
    if (!result) throw violation("the stream ended without a task or a message");
    if (isMessage(result) || !isUnfinished(result.status?.state)) return result;
    // An agent that did not wait for its task to settle: asked again until it does, within the call's timeout.
    const until = performance.now() + timeoutMs;
    let task = result;
    for (let wait = POLL_FIRST_MS; isUnfinished(task.status?.state); wait = Math.min(POLL_MAX_MS, wait * 2)) {
      if (performance.now() + wait > until) {
        throw new RunFailedError(
          "timeout",
          `The agent's task ${task.id} was still ${stateName(task.status?.state)} after ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (turn) turn.latencyMs += wait;
      if (signal.aborted) throw coerceError(signal.reason);
      task = await a2a.getTask({ tenant: "", id: task.id }, { signal });
    }
    return task;
  }

  /** The turn's answer from the task it settled in: its status message, and its artifacts new or changed. */
  function answerOf(task: Task): { content: string | null; artifacts: AgentArtifact[]; state: string } {
    const state = task.status?.state;
    const name = stateName(state);
    const evidence = { response_body: truncate(JSON.stringify(TaskCodec.toJSON(task))) };
    const said = task.status?.message ? textOf(task.status.message.parts) : "";
    switch (state) {
      case TaskState.TASK_STATE_COMPLETED:
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        break;
      case TaskState.TASK_STATE_FAILED:
      case TaskState.TASK_STATE_REJECTED:
      case TaskState.TASK_STATE_CANCELED:
        throw violation(`its task ${task.id} ended ${name}${said ? `: ${said}` : ""}`, evidence);
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        throw new RunFailedError(
          "target_unreachable",
          `The agent's task ${task.id} is auth-required: the environment's headers do not authorize assure${said ? ` (${said})` : ""}`,
          { ...(turn?.last ? { http_status: turn.last.status } : {}), ...evidence },
        );
      default:
        throw violation(`its task ${task.id} was left ${name}`, evidence);
    }
    const fresh: Artifact[] = [];
    for (const artifact of task.artifacts) {
      const key = `${task.id}\u0000${artifact.artifactId}`;
      const json = JSON.stringify(ArtifactCodec.toJSON(artifact));
      if (recorded.get(key) === json) continue;
      recorded.set(key, json);
      fresh.push(artifact);
    }
    const texts = [said, ...fresh.map((artifact) => textOf(artifact.parts))].filter((text) => text !== "");
    return { content: texts.length > 0 ? texts.join("\n") : null, artifacts: fresh.map(recordedArtifact), state: name };
  }

  return {
    async complete({ messages, mcpUrl, signal, onThrottled, traceparent }): Promise<AgentReply> {
      turn = { signal, onThrottled, traceparent, attempts: 1, latencyMs: 0, last: undefined };
      const user = messages.findLast((m) => m.role === "user")?.content ?? "";
      const system = messages.find((m) => m.role === "system")?.content;
      const first = !messages.some((m) => m.role === "assistant");
      // A2A has no system role, nor a place for the tools to use: both go in the message's metadata.
      const metadata = {
        ...(first && system ? { system } : {}),
        ...(mcpUrl ? { [MCP_URL_METADATA_KEY]: mcpUrl } : {}),
      };
      try {
        client ??= await connect(signal);
        const request: SendMessageRequest = {
          tenant: "",
          message: {
            messageId: randomUUID(),
            contextId: contextId ?? "",
            taskId: openTaskId ?? "",
            role: Role.ROLE_USER,
            parts: [
              { content: { $case: "text", value: user }, metadata: undefined, filename: "", mediaType: "text/plain" },
            ],
            metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          configuration: {
            acceptedOutputModes: [],
            taskPushNotificationConfig: undefined,
            returnImmediately: false,
          },
          metadata: undefined,
        };
        const result = await send(client, request, signal);
        const given = result.contextId || undefined;
        if (contextId && given && given !== contextId) {
          throw violation(`it answered in context ${given}, not in the conversation's context ${contextId}`);
        }
        contextId ??= given;
        let content: string | null;
        let artifacts: AgentArtifact[] = [];
        let finish: string;
        if (isMessage(result)) {
          content = textOf(result.parts) || null;
          finish = "message";
          openTaskId = undefined;
        } else {
          ({ content, artifacts, state: finish } = answerOf(result));
          openTaskId = result.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? result.id : undefined;
        }
        return {
          content,
          tool_calls: [],
          hosted_tool_calls: [],
          finish_reason: finish,
          latency_ms: Math.round(turn.latencyMs * 100) / 100,
          model: null,
          usage: null,
          attempts: turn.attempts,
          ...(artifacts.length > 0 ? { artifacts } : {}),
        };
      } catch (error) {
        if (signal.aborted) throw coerceError(signal.reason);
        if (error instanceof RunFailedError) throw error;
        // The SDK could not read what the agent answered (a JSON-RPC error, a broken stream, not JSON).
        throw violation(coerceError(error).message);
      } finally {
        turn = undefined;
      }
    },
  };
}

/** A2A (Agent2Agent) through the official SDK: the agent runs its own tools; readiness is its card. */
export const a2a: AgentProtocol = { readinessPath: CARD_PATH, toolsRunBy: "agent", makeAgent: makeA2aAgent };
