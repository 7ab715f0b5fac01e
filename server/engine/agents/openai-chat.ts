import { postChatCompletion } from "../../net/chat-completions.js";
import { RunFailedError } from "../../errors.js";
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

/**
 * An agent reached over OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`).
 * What cannot be recovered from becomes a run failure with its cause: target_unreachable (also
 * for HTTP errors such as 401 or 404: the environment is misconfigured), timeout, or
 * agent_contract_violation when a 2xx answer is not a chat completion (the response is evidence).
 */
function makeOpenAiChatAgent({
  egress,
  target,
  timeoutMs,
  maxAttempts,
  backoffMs,
  pacer,
  deadline,
  now,
}: AgentOptions): Agent {
  const url = new URL(`${target.base_url}/chat/completions`);
  // A conversation's messages only grow, and its tools stay the same: each is put in wire form once.
  let wireMessages: Record<string, unknown>[] = [];
  let messagesSeen: readonly ChatMessage[] | undefined;
  let wireTools: ReturnType<typeof toWireTool>[] = [];
  let toolsSeen: readonly ToolDefinition[] | undefined;
  return {
    async complete(messages, tools, signal, onThrottled): Promise<AgentReply> {
      if (messages !== messagesSeen || messages.length < wireMessages.length) {
        messagesSeen = messages;
        wireMessages = [];
      }
      for (let i = wireMessages.length; i < messages.length; i++) wireMessages.push(toWireMessage(messages[i]!));
      if (tools !== toolsSeen) {
        toolsSeen = tools;
        wireTools = tools.map(toWireTool);
      }
      const outcome = await postChatCompletion(egress, {
        url,
        headers: target.headers,
        body: {
          ...(target.model ? { model: target.model } : {}),
          messages: wireMessages,
          ...(wireTools.length > 0 ? { tools: wireTools } : {}),
        },
        timeoutMs,
        signal,
        pacer,
        onThrottled,
        deadline,
        ...(now ? { now } : {}),
        ...(maxAttempts ? { maxAttempts } : {}),
        ...(backoffMs ? { backoffMs } : {}),
      });
      switch (outcome.kind) {
        case "unreachable":
          throw new RunFailedError("target_unreachable", `The agent ${outcome.message}`);
        case "refused":
          throw new RunFailedError("target_unreachable", `The agent at ${url} refused the call: ${outcome.message}`, {
            http_status: outcome.http_status,
            response_body: outcome.response_body,
          });
        case "timeout":
          throw new RunFailedError("timeout", `The agent did not answer: ${outcome.message}`);
        case "invalid":
          throw new RunFailedError(
            "agent_contract_violation",
            `The agent's answer breaks the Chat Completions contract: ${outcome.message}`,
            {
              http_status: outcome.http_status,
              response_body: outcome.response_body,
            },
          );
        case "ok":
          return {
            content: outcome.choice.message.content ?? null,
            tool_calls: (outcome.choice.message.tool_calls ?? []).map((call) => ({
              id: call.id,
              name: call.function.name,
              arguments_raw: call.function.arguments,
            })),
            finish_reason: outcome.choice.finish_reason ?? null,
            latency_ms: outcome.latency_ms,
            model: outcome.model,
            usage: outcome.usage,
            attempts: outcome.attempts,
          };
      }
    },
  };
}

/** OpenAI-compatible Chat Completions with tools: the baseline protocol most agent frameworks and model servers speak. */
export const openAiChat: AgentProtocol = { readinessPath: "/models", makeAgent: makeOpenAiChatAgent };
