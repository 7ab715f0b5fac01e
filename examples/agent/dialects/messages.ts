import type { WireMessage } from "../policy.js";
import type { Dialect } from "./types.js";

type Block = {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
};

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((block: Block) => (block.type === "text" ? (block.text ?? "") : "")).join("")
      : "";

/** Anthropic Messages: `POST /v1/messages`, tool calls as `tool_use` blocks, results as `tool_result` blocks. */
export const messages: Dialect = {
  conversationOf(body, headers) {
    if (!headers["anthropic-version"]) return "anthropic-version: header is required";
    if (!Array.isArray(body.messages)) return "messages: Field required";
    if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
    const conversation: WireMessage[] = [];
    const system = textOf(body.system);
    if (system) conversation.push({ role: "system", content: system });
    for (const message of body.messages as { role: string; content: unknown }[]) {
      const blocks: Block[] =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content as Block[]);
      if (!Array.isArray(blocks)) return "messages: content must be a string or a list of blocks";
      if (message.role === "assistant") {
        const uses = blocks.filter((block) => block.type === "tool_use");
        conversation.push({
          role: "assistant",
          content: textOf(blocks) || null,
          ...(uses.length > 0
            ? {
                tool_calls: uses.map((use) => ({
                  id: use.id ?? "",
                  type: "function" as const,
                  function: { name: use.name ?? "", arguments: JSON.stringify(use.input ?? {}) },
                })),
              }
            : {}),
        });
      } else if (message.role === "user") {
        for (const block of blocks) {
          if (block.type === "tool_result") {
            conversation.push({ role: "tool", tool_call_id: block.tool_use_id ?? "", content: textOf(block.content) });
          }
        }
        const text = textOf(blocks);
        if (text || !blocks.some((block) => block.type === "tool_result")) {
          conversation.push({ role: "user", content: text });
        }
      } else {
        return `messages: unknown role ${message.role}`;
      }
    }
    return conversation;
  },
  answer({ serial, model, decision, invalidToolCall, usage }) {
    const content =
      decision.kind === "reply"
        ? [{ type: "text", text: decision.content }]
        : [
            {
              type: "tool_use",
              ...(invalidToolCall ? {} : { id: `toolu_${serial}` }),
              name: decision.name,
              input: inputOf(decision.arguments),
            },
          ];
    return {
      id: `msg_${serial}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: decision.kind === "reply" ? "end_turn" : "tool_use",
      stop_sequence: null,
      ...(usage ? { usage: { input_tokens: usage.input, output_tokens: usage.output } } : {}),
    };
  },
  hollowAnswer: (serial) => ({ id: `msg_${serial}`, type: "message", role: "assistant" }),
};

/** Tool input is a JSON object in Messages: arguments that are not one (the `bad-arguments-json` behaviour) go as a string field. */
function inputOf(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // not JSON: kept as text below
  }
  return { unparsed: text };
}
