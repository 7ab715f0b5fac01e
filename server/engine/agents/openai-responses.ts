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

/** The part of an OpenAI Responses answer assure relies on; output items of other types are the agent's own tools. */
const ResponseObject = z.object({
  status: z.string().nullish(),
  model: z.string().max(200).nullish(),
  output: z.array(z.looseObject({ type: z.string(), id: z.string().nullish() })),
  incomplete_details: z.object({ reason: z.string().nullish() }).nullish(),
  error: z.object({ message: z.string().nullish() }).nullish(),
  usage: z
    .object({
      input_tokens: z.number().int().nonnegative(),
      output_tokens: z.number().int().nonnegative(),
      total_tokens: z.number().int().nonnegative(),
    })
    .partial()
    .nullish(),
});

const MessageItem = z.object({
  type: z.literal("message"),
  content: z.array(
    z.union([
      z.looseObject({ type: z.literal("output_text"), text: z.string() }),
      z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
      z.looseObject({ type: z.string() }),
    ]),
  ),
});
const FunctionCallItem = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
});

function readResponse(json: unknown): AnswerReading<ModelAnswer> {
  const parsed = ResponseObject.safeParse(json);
  if (!parsed.success) return { ok: false, message: firstIssue(parsed.error) };
  const { status, output, usage, model, incomplete_details, error } = parsed.data;
  if (status === "failed") return { ok: false, message: `the response failed: ${error?.message ?? "no reason given"}` };
  const texts: string[] = [];
  const toolCalls: AgentReply["tool_calls"] = [];
  const hosted: HostedToolCall[] = [];
  for (const [index, item] of output.entries()) {
    if (item.type === "message") {
      const message = MessageItem.safeParse(item);
      if (!message.success) return { ok: false, message: `output.${index}.${firstIssue(message.error)}` };
      for (const part of message.data.content) {
        if (part.type === "output_text") texts.push((part as { text: string }).text);
        else if (part.type === "refusal") texts.push((part as { refusal: string }).refusal);
      }
    } else if (item.type === "function_call") {
      const call = FunctionCallItem.safeParse(item);
      if (!call.success) return { ok: false, message: `output.${index}.${firstIssue(call.error)}` };
      toolCalls.push({ id: call.data.call_id, name: call.data.name, arguments_raw: call.data.arguments });
    } else if (item.type !== "reasoning") {
      hosted.push(hostedCallOf(item, index));
    }
  }
  const total =
    usage?.total_tokens ??
    (usage?.input_tokens !== undefined && usage.output_tokens !== undefined
      ? usage.input_tokens + usage.output_tokens
      : null);
  return {
    ok: true,
    answer: {
      content: texts.length > 0 ? texts.join("") : null,
      tool_calls: toolCalls,
      hosted_tool_calls: hosted,
      finish_reason:
        status === "incomplete"
          ? (incomplete_details?.reason ?? "incomplete")
          : toolCalls.length > 0
            ? "tool_calls"
            : (status ?? null),
      model: model ?? null,
      usage:
        total === null
          ? null
          : {
              input_tokens: usage?.input_tokens ?? null,
              output_tokens: usage?.output_tokens ?? null,
              total_tokens: total,
            },
    },
  };
}

/**
 * An output item of a tool the agent ran itself (`web_search_call`, `mcp_call`, `file_search_call`,
 * `code_interpreter_call`, …): named by the item's `name` (an MCP tool's) or else by its type,
 * with its arguments and output where the item carries them.
 */
function hostedCallOf(item: Record<string, unknown>, index: number): HostedToolCall {
  const type = String(item.type);
  const name = typeof item.name === "string" && item.name ? item.name : type.replace(/_call$/, "");
  const id = typeof item.id === "string" && item.id ? item.id : `${type}_${index}`;
  const { arguments: args, output, results, ...rest } = item;
  let parsed: unknown = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      parsed = { raw: args };
    }
  }
  const argumentsObject =
    parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : Object.fromEntries(Object.entries(rest).filter(([key]) => !["type", "id", "status", "name"].includes(key)));
  const result = output ?? results;
  return { id, name, arguments: argumentsObject, ...(result !== undefined && result !== null ? { result } : {}) };
}

/** The conversation as Responses input items: function calls and their outputs as items of their own. */
function toInputItems(message: ChatMessage): Record<string, unknown>[] {
  switch (message.role) {
    case "system":
      return [{ type: "message", role: "system", content: message.content ?? "" }];
    case "user":
      return [{ type: "message", role: "user", content: message.content ?? "" }];
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id, output: message.content ?? "" }];
    case "assistant":
      return [
        ...(message.content ? [{ type: "message", role: "assistant", content: message.content }] : []),
        ...(message.tool_calls ?? []).map((call) => ({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: call.arguments_raw,
        })),
      ];
  }
}

const toWireTool = (tool: ToolDefinition) => ({
  type: "function",
  name: tool.name,
  ...(tool.description ? { description: tool.description } : {}),
  parameters: tool.parameters ?? { type: "object", properties: {} },
  strict: false,
});

/** An agent reached over the OpenAI Responses API (`POST {base_url}/responses`), statelessly (`store: false`). */
function makeOpenAiResponsesAgent(options: AgentOptions): Agent {
  const { target } = options;
  const url = endpointUrl(target.base_url, "/responses");
  return {
    async complete({ messages, tools, signal, onThrottled, traceparent }): Promise<AgentReply> {
      const answer = await callAgent(options, {
        traceparent,
        url,
        body: {
          ...(target.model ? { model: target.model } : {}),
          input: messages.flatMap(toInputItems),
          ...(tools.length > 0 ? { tools: tools.map(toWireTool) } : {}),
          store: false,
        },
        signal,
        onThrottled,
        contract: "the Responses contract",
        read: readResponse,
      });
      return replyOf(answer);
    },
  };
}

/** OpenAI's Responses API: function tools answered from the spec's mocks, the agent's hosted tools recorded. */
export const openAiResponses: AgentProtocol = {
  readinessPath: "/models",
  toolsRunBy: "assure",
  makeAgent: makeOpenAiResponsesAgent,
};
