import { z } from "zod";
import { firstIssue, type AnswerReading } from "../../net/json-call.js";
import { callAgent, endpointUrl, replyOf } from "./agent-call.js";
import type {
  Agent,
  AgentOptions,
  AgentProtocol,
  AgentReply,
  ChatMessage,
  HostedToolCall,
  ModelAnswer,
  ToolDefinition,
} from "./types.js";

/** The Messages API version assure speaks, sent unless the environment's headers name another. */
const ANTHROPIC_VERSION = "2023-06-01";
/** Messages requires a cap on the answer's tokens: one no agent's turn comes near. */
const MAX_TOKENS = 8192;

const Block = z.looseObject({ type: z.string() });
const TextBlock = z.object({ type: z.literal("text"), text: z.string() });
const ToolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});

/** The part of an Anthropic Messages answer assure relies on. */
const MessageObject = z.object({
  type: z.literal("message").optional(),
  role: z.literal("assistant").optional(),
  model: z.string().max(200).nullish(),
  content: z.array(Block),
  stop_reason: z.string().nullish(),
  usage: z
    .object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() })
    .partial()
    .nullish(),
});

/** Blocks of the tools the agent ran itself, and the blocks that carry their results. */
const HOSTED_USE = new Set(["server_tool_use", "mcp_tool_use"]);
const HOSTED_RESULT = /_tool_result$/;

function readMessage(json: unknown): AnswerReading<ModelAnswer> {
  const parsed = MessageObject.safeParse(json);
  if (!parsed.success) return { ok: false, message: firstIssue(parsed.error) };
  const texts: string[] = [];
  const toolCalls: AgentReply["tool_calls"] = [];
  const hosted: HostedToolCall[] = [];
  for (const [index, block] of parsed.data.content.entries()) {
    if (block.type === "text") {
      const text = TextBlock.safeParse(block);
      if (!text.success) return { ok: false, message: `content.${index}.${firstIssue(text.error)}` };
      texts.push(text.data.text);
    } else if (block.type === "tool_use") {
      const use = ToolUseBlock.safeParse(block);
      if (!use.success) return { ok: false, message: `content.${index}.${firstIssue(use.error)}` };
      toolCalls.push({ id: use.data.id, name: use.data.name, arguments_raw: JSON.stringify(use.data.input) });
    } else if (HOSTED_USE.has(block.type)) {
      const id = typeof block.id === "string" && block.id ? block.id : `${block.type}_${index}`;
      const input = block.input;
      hosted.push({
        id,
        name: typeof block.name === "string" ? block.name : block.type,
        arguments:
          input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {},
      });
    } else if (HOSTED_RESULT.test(block.type)) {
      const call = hosted.find((candidate) => candidate.id === block.tool_use_id);
      if (call) call.result = block.content;
    }
  }
  const { usage, model, stop_reason } = parsed.data;
  const input = usage?.input_tokens ?? null;
  const output = usage?.output_tokens ?? null;
  return {
    ok: true,
    answer: {
      content: texts.length > 0 ? texts.join("") : null,
      tool_calls: toolCalls,
      hosted_tool_calls: hosted,
      finish_reason: stop_reason ?? null,
      model: model ?? null,
      usage:
        input === null && output === null
          ? null
          : { input_tokens: input, output_tokens: output, total_tokens: (input ?? 0) + (output ?? 0) },
    },
  };
}

type WireMessage = { role: "user" | "assistant"; content: Record<string, unknown>[] };

/**
 * The conversation as Messages: the system prompt apart, tool calls as `tool_use` blocks of the
 * assistant's turn, their results as `tool_result` blocks of one user turn (roles alternate).
 */
function toWire(messages: readonly ChatMessage[]): { system: string | undefined; messages: WireMessage[] } {
  const system = messages
    .filter((message) => message.role === "system")
    .map((message) => message.content ?? "")
    .join("\n\n");
  const wire: WireMessage[] = [];
  const append = (role: WireMessage["role"], block: Record<string, unknown>) => {
    const last = wire.at(-1);
    if (last?.role === role) last.content.push(block);
    else wire.push({ role, content: [block] });
  };
  for (const message of messages) {
    switch (message.role) {
      case "user":
        append("user", { type: "text", text: message.content ?? "" });
        break;
      case "tool":
        append("user", { type: "tool_result", tool_use_id: message.tool_call_id, content: message.content ?? "" });
        break;
      case "assistant":
        if (message.content) append("assistant", { type: "text", text: message.content });
        for (const call of message.tool_calls ?? []) {
          append("assistant", { type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments_raw) });
        }
        break;
    }
  }
  return { system: system || undefined, messages: wire };
}

function inputOf(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const toWireTool = (tool: ToolDefinition) => ({
  name: tool.name,
  ...(tool.description ? { description: tool.description } : {}),
  input_schema: tool.parameters ?? { type: "object", properties: {} },
});

/** An agent reached over Anthropic's Messages API (`POST {base_url}/v1/messages`). */
function makeAnthropicMessagesAgent(options: AgentOptions): Agent {
  const { target } = options;
  const url = endpointUrl(target.base_url, "/v1/messages");
  return {
    async complete({ messages, tools, signal, onThrottled, traceparent }): Promise<AgentReply> {
      const { system, messages: wire } = toWire(messages);
      const answer = await callAgent(options, {
        traceparent,
        url,
        headers: { "anthropic-version": ANTHROPIC_VERSION },
        body: {
          ...(target.model ? { model: target.model } : {}),
          max_tokens: MAX_TOKENS,
          ...(system ? { system } : {}),
          messages: wire,
          ...(tools.length > 0 ? { tools: tools.map(toWireTool) } : {}),
        },
        signal,
        onThrottled,
        contract: "the Messages contract",
        read: readMessage,
      });
      return replyOf(answer);
    },
  };
}

/** Anthropic's Messages API: `tool_use` blocks answered from the spec's mocks as `tool_result`. */
export const anthropicMessages: AgentProtocol = {
  readinessPath: "/v1/models",
  toolsRunBy: "assure",
  makeAgent: makeAnthropicMessagesAgent,
};
