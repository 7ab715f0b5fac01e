import type { WireMessage, WireToolCall } from "../policy.js";
import type { Dialect } from "./types.js";

type InputItem = {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
};

/** A message item's text: a string, or its text parts joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { text?: unknown }) => (typeof part.text === "string" ? part.text : "")).join("");
}

/** OpenAI Responses: `POST /v1/responses`, stateless (`input` items, `instructions`). */
export const responses: Dialect = {
  conversationOf(body) {
    const messages: WireMessage[] = [];
    if (typeof body.instructions === "string") messages.push({ role: "system", content: body.instructions });
    if (typeof body.input === "string") return [...messages, { role: "user", content: body.input }];
    if (!Array.isArray(body.input)) return "input is required";
    for (const item of body.input as InputItem[]) {
      if (item.type === "function_call") {
        const call: WireToolCall = {
          id: item.call_id ?? "",
          type: "function",
          function: { name: item.name ?? "", arguments: item.arguments ?? "" },
        };
        const last = messages.at(-1);
        if (last?.role === "assistant" && last.content === null) (last.tool_calls ??= []).push(call);
        else messages.push({ role: "assistant", content: null, tool_calls: [call] });
      } else if (item.type === "function_call_output") {
        messages.push({ role: "tool", tool_call_id: item.call_id ?? "", content: textOf(item.output) });
      } else if (item.type === undefined || item.type === "message") {
        const role = item.role === "developer" ? "system" : item.role;
        if (role !== "system" && role !== "user" && role !== "assistant") return `unknown role ${String(item.role)}`;
        messages.push({ role, content: textOf(item.content) });
      } else {
        return `unsupported input item type ${item.type}`;
      }
    }
    return messages;
  },
  answer({ serial, model, decision, invalidToolCall, usage }) {
    const output =
      decision.kind === "reply"
        ? [
            {
              type: "message",
              id: `msg_${serial}`,
              status: "completed",
              role: "assistant",
              content: [{ type: "output_text", text: decision.content, annotations: [] }],
            },
          ]
        : [
            {
              type: "function_call",
              id: `fc_${serial}`,
              status: "completed",
              ...(invalidToolCall ? {} : { call_id: `call_${serial}` }),
              name: decision.name,
              arguments: decision.arguments,
            },
          ];
    return {
      id: `resp_${serial}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      model,
      output,
      ...(usage
        ? {
            usage: { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input + usage.output },
          }
        : {}),
    };
  },
  hollowAnswer: (serial) => ({ id: `resp_${serial}`, object: "response", status: "completed" }),
};
