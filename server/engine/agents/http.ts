import { search, type JSONValue } from "@jmespath-community/jmespath";
import { createParser } from "eventsource-parser";
import { z } from "zod";
import { placeholdersIn, type HttpEndpoint } from "../../contract/index.js";
import type { AnswerReading } from "../../net/json-call.js";
import { callAgent, endpointUrl } from "./agent-call.js";
import { fillBody, fillText, type PlaceholderValues } from "./http-template.js";
import type { Agent, AgentOptions, AgentProtocol, AgentReply, ChatMessage, HostedToolCall } from "./types.js";

/** A tool call as the response mapping's `tool_calls` gives it. */
const MappedToolCall = z.object({
  name: z.string().min(1).max(200),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullish(),
  id: z.union([z.string(), z.number()]).nullish(),
  result: z.unknown().optional(),
});

interface HttpAnswer {
  content: string;
  sessionId: string | null;
  hosted_tool_calls: HostedToolCall[];
}

/** Server-sent events: each event's data, as JSON where it is JSON (`[DONE]` and comments skipped). */
function decodeEvents(text: string): unknown[] {
  const events: unknown[] = [];
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") return;
      try {
        events.push(JSON.parse(event.data));
      } catch {
        events.push(event.data);
      }
    },
  });
  parser.feed(text);
  parser.reset({ consume: true });
  if (events.length === 0) throw new Error("the answer holds no server-sent event");
  return events;
}

const found = (value: unknown) => value !== null && value !== undefined;

/** The answer read as its mapping says: its text, the session it names, the tools it says it ran. */
function readerOf(response: HttpEndpoint["response"]) {
  const at = (json: unknown, expression: string) => search(json as JSONValue, expression);
  return (decoded: unknown): AnswerReading<HttpAnswer> => {
    // A stream's events are read one by one: texts joined, the last session named, every tool call.
    const answers = response.stream === "sse" ? (decoded as unknown[]) : [decoded];
    const texts: string[] = [];
    let sessionId: string | null = null;
    const calls: HostedToolCall[] = [];
    for (const answer of answers) {
      const text = at(answer, response.text);
      if (typeof text === "string") texts.push(text);
      else if (found(text) && typeof text !== "object") texts.push(String(text));
      else if (found(text)) return { ok: false, message: `response.text (${response.text}) is not text` };
      if (response.session_id) {
        const session = at(answer, response.session_id);
        if (typeof session === "string" || typeof session === "number") sessionId = String(session);
      }
      if (response.tool_calls) {
        const mapped = at(answer, response.tool_calls);
        if (!found(mapped)) continue;
        const parsed = z.array(MappedToolCall).max(1000).safeParse(mapped);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          return {
            ok: false,
            message: `response.tool_calls (${response.tool_calls}) is not a list of {name, arguments}: ${issue.path.join(".")}: ${issue.message}`,
          };
        }
        for (const call of parsed.data) calls.push(toolCallOf(call, calls.length));
      }
    }
    if (texts.length === 0) return { ok: false, message: `the answer has no text at response.text (${response.text})` };
    return { ok: true, answer: { content: texts.join(""), sessionId, hosted_tool_calls: calls } };
  };
}

function toolCallOf(call: z.infer<typeof MappedToolCall>, index: number): HostedToolCall {
  let args: Record<string, unknown> = {};
  if (typeof call.arguments === "string") {
    try {
      const parsed: unknown = JSON.parse(call.arguments);
      args = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      args = { raw: call.arguments };
    }
  } else if (call.arguments) {
    args = call.arguments;
  }
  return {
    ...(found(call.id) ? { id: String(call.id) } : { id: `reply_${index + 1}`, id_assigned: true as const }),
    name: call.name,
    arguments: args,
    ...(call.result !== undefined ? { result: call.result } : {}),
  };
}

/** The conversation so far, OpenAI-style, for `{{messages}}`. */
const messagesOf = (messages: readonly ChatMessage[]) =>
  messages
    .filter((message) => message.role !== "tool")
    .map((message) => ({ role: message.role, content: message.content }));

/**
 * An agent behind any JSON API (`protocol: http`): each user turn is one request, built from the
 * endpoint's template, and the answer is read by its JMESPath mapping. The agent runs its own
 * tools: those its answer names are recorded as what it did.
 */
function makeHttpAgent(options: AgentOptions): Agent {
  const { target } = options;
  const http = target.http;
  if (!http) throw new Error(`environment ${target.environment_id} speaks http but has no request and response`);
  const read = readerOf(http.response);
  let sessionId: string | null = null;
  return {
    async complete({ messages, conversationId, turn, mcpUrl, signal, onThrottled, traceparent }): Promise<AgentReply> {
      const values: PlaceholderValues = {
        message: messages.findLast((message) => message.role === "user")?.content ?? "",
        messages: messagesOf(messages),
        conversation_id: conversationId,
        session_id: sessionId,
        turn,
        mcp_url: mcpUrl ?? null,
      };
      const headers: Record<string, string> = http.response.stream === "sse" ? { accept: "text/event-stream" } : {};
      if (http.request.mcp_url_header && mcpUrl) headers[http.request.mcp_url_header.toLowerCase()] = mcpUrl;
      const answer = await callAgent(options, {
        traceparent,
        url: endpointUrl(target.base_url, fillText(http.request.path, values, encodeURIComponent)),
        method: http.request.method,
        headers,
        body: http.request.body === undefined ? undefined : fillBody(http.request.body, values),
        ...(http.response.stream === "sse" ? { decode: decodeEvents } : {}),
        signal,
        onThrottled,
        contract: "its response mapping",
        read,
      });
      if (answer.sessionId !== null) sessionId = answer.sessionId;
      return {
        content: answer.content,
        tool_calls: [],
        hosted_tool_calls: answer.hosted_tool_calls,
        finish_reason: null,
        latency_ms: answer.latency_ms,
        attempts: answer.attempts,
        model: null,
        usage: null,
      };
    },
  };
}

/** The strings of a JSON value, keys and values. */
const textsOf = (value: unknown): string[] =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(textsOf)
      : value && typeof value === "object"
        ? Object.entries(value).flatMap(([key, item]) => [key, ...textsOf(item)])
        : [];

/** Whether the environment sends the agent its conversation's MCP URL (in the template or a header). */
function sendsMcpUrl(target: AgentOptions["target"]): boolean {
  const request = target.http?.request;
  if (!request) return false;
  if (request.mcp_url_header) return true;
  return [request.path, ...textsOf(request.body)].some((text) => placeholdersIn(text).includes("mcp_url"));
}

/** Any JSON API, called as the environment's request template says and read by its JMESPath mapping. */
export const httpAgent: AgentProtocol = {
  readinessPath: "/health",
  toolsRunBy: "agent",
  makeAgent: makeHttpAgent,
  sendsMcpUrl,
};
