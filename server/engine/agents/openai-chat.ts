import { z } from "zod";
import { coerceError } from "../../errors.js";
import type { EgressPolicy } from "../../net/egress.js";
import { OutboundTimeoutError, sendOutbound } from "../../net/http-request.js";
import type { EnvironmentTarget } from "../../store/index.js";
import { RunFailedError } from "../run-states.js";
import type { Agent, AgentReply, ChatMessage, ToolDefinition } from "./types.js";

/** The part of an OpenAI Chat Completions response the engine relies on. */
const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          role: z.literal("assistant").optional(),
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().min(1),
                type: z.literal("function").optional(),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
});

const TRANSIENT_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EAI_AGAIN", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH"]);
const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);
const RAW_LIMIT = 64 * 1024;

export interface OpenAiChatAgentOptions {
  egress: EgressPolicy;
  target: EnvironmentTarget;
  timeoutMs: number;
  /** Attempts per call for connection failures and 429/502/503/504. */
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
}

const truncate = (text: string) => (text.length > RAW_LIMIT ? `${text.slice(0, RAW_LIMIT)}…[truncated]` : text);

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  const wire: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.tool_calls?.length) {
    wire.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments_raw },
    }));
  }
  if (message.tool_call_id) wire.tool_call_id = message.tool_call_id;
  return wire;
}

function toWireTool(tool: ToolDefinition) {
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: "object", properties: {} },
    },
  };
}

/**
 * An agent reached over OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`).
 * Transient network failures are retried with backoff; what remains becomes a run failure
 * with its cause: target_unreachable, timeout, or agent_contract_violation (with the response).
 */
export function makeOpenAiChatAgent({
  egress,
  target,
  timeoutMs,
  maxAttempts = 3,
  backoffMs = (attempt) => 100 * 3 ** (attempt - 1),
}: OpenAiChatAgentOptions): Agent {
  const url = `${target.base_url}/chat/completions`;

  async function send(body: string, signal: AbortSignal) {
    let lastProblem = "";
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (signal.aborted) throw coerceError(signal.reason);
      try {
        const response = await sendOutbound(egress, { url, method: "POST", headers: target.headers, body, timeoutMs });
        if (!TRANSIENT_STATUS.has(response.status)) return { response, attempts: attempt };
        lastProblem = `HTTP ${response.status}`;
      } catch (raw) {
        const error = coerceError(raw);
        if (error instanceof OutboundTimeoutError) {
          throw new RunFailedError("timeout", `The agent did not answer within ${timeoutMs} ms (${url})`);
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (!code || !TRANSIENT_CODES.has(code)) {
          throw new RunFailedError("target_unreachable", `The agent at ${url} cannot be reached: ${error.message}`);
        }
        lastProblem = `${code}: ${error.message}`;
      }
      if (attempt < maxAttempts) await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    }
    throw new RunFailedError("target_unreachable", `The agent at ${url} failed ${maxAttempts} times; last: ${lastProblem}`);
  }

  return {
    async complete(messages, tools, signal): Promise<AgentReply> {
      const body = JSON.stringify({
        ...(target.model ? { model: target.model } : {}),
        messages: messages.map(toWireMessage),
        ...(tools.length > 0 ? { tools: tools.map(toWireTool) } : {}),
      });
      const { response, attempts } = await send(body, signal);
      const text = response.body.toString("utf8");
      const violation = (problem: string) =>
        new RunFailedError("agent_contract_violation", `The agent's answer breaks the Chat Completions contract: ${problem}`, {
          http_status: response.status,
          response_body: truncate(text),
        });
      if (response.status < 200 || response.status >= 300) throw violation(`HTTP ${response.status}`);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw violation("the body is not JSON");
      }
      const parsed = ChatCompletion.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw violation(`${issue.path.join(".") || "(body)"}: ${issue.message}`);
      }
      const choice = parsed.data.choices[0]!;
      return {
        content: choice.message.content ?? null,
        tool_calls: (choice.message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments_raw: call.function.arguments,
        })),
        finish_reason: choice.finish_reason ?? null,
        latency_ms: Math.round(response.elapsedMs * 100) / 100,
        attempts,
      };
    },
  };
}
