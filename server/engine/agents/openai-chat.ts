import { readChatCompletion } from "../../net/chat-completions.js";
import { callAgent, endpointUrl } from "./agent-call.js";
import type { Agent, AgentOptions, AgentProtocol, AgentReply, ChatMessage, ToolDefinition } from "./types.js";

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

/** An agent reached over OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`). */
function makeOpenAiChatAgent(options: AgentOptions): Agent {
  const { target } = options;
  const url = endpointUrl(target.base_url, "/chat/completions");
  // A conversation's messages only grow, and its tools stay the same: each is put in wire form once.
  let wireMessages: Record<string, unknown>[] = [];
  let messagesSeen: readonly ChatMessage[] | undefined;
  let wireTools: ReturnType<typeof toWireTool>[] = [];
  let toolsSeen: readonly ToolDefinition[] | undefined;
  return {
    async complete({ messages, tools, signal, onThrottled, traceparent }): Promise<AgentReply> {
      if (messages !== messagesSeen || messages.length < wireMessages.length) {
        messagesSeen = messages;
        wireMessages = [];
      }
      for (let i = wireMessages.length; i < messages.length; i++) wireMessages.push(toWireMessage(messages[i]!));
      if (tools !== toolsSeen) {
        toolsSeen = tools;
        wireTools = tools.map(toWireTool);
      }
      const answer = await callAgent(options, {
        traceparent,
        url,
        body: {
          ...(target.model ? { model: target.model } : {}),
          messages: wireMessages,
          ...(wireTools.length > 0 ? { tools: wireTools } : {}),
        },
        signal,
        onThrottled,
        contract: "the Chat Completions contract",
        read: readChatCompletion,
      });
      return {
        content: answer.choice.message.content ?? null,
        tool_calls: (answer.choice.message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments_raw: call.function.arguments,
        })),
        hosted_tool_calls: [],
        finish_reason: answer.choice.finish_reason ?? null,
        latency_ms: answer.latency_ms,
        model: answer.model,
        usage: answer.usage,
        attempts: answer.attempts,
      };
    },
  };
}

/** OpenAI-compatible Chat Completions with tools: the baseline protocol most agent frameworks and model servers speak. */
export const openAiChat: AgentProtocol = {
  readinessPath: "/models",
  toolsRunBy: "assure",
  makeAgent: makeOpenAiChatAgent,
};
