import type { WireMessage } from "../policy.js";
import type { Dialect } from "./types.js";

/** OpenAI Chat Completions: `POST /v1/chat/completions`, the conversation as it is. */
export const chatCompletions: Dialect = {
  conversationOf(body) {
    return Array.isArray(body.messages) ? (body.messages as WireMessage[]) : "messages is required";
  },
  answer({ serial, model, decision, invalidToolCall, usage }) {
    const message =
      decision.kind === "reply"
        ? { role: "assistant", content: decision.content }
        : invalidToolCall
          ? { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: 7 } }] }
          : {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: `call_${serial}`,
                  type: "function",
                  function: { name: decision.name, arguments: decision.arguments },
                },
              ],
            };
    return {
      id: `chatcmpl-${serial}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, finish_reason: decision.kind === "reply" ? "stop" : "tool_calls" }],
      ...(usage
        ? {
            usage: {
              prompt_tokens: usage.input,
              completion_tokens: usage.output,
              total_tokens: usage.input + usage.output,
            },
          }
        : {}),
    };
  },
  hollowAnswer: (serial) => ({ id: `chatcmpl-${serial}`, object: "chat.completion", choices: [] }),
};
