import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { asyncListener } from "./async-listener.js";
import { readBody } from "../../examples/agent/server.js";

export interface ScriptedMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

export interface ScriptedReply {
  content: string | null;
  /** `raw_arguments`: the arguments string as sent, instead of `arguments` as JSON. */
  tool_calls?: { name: string; arguments?: unknown; raw_arguments?: string }[];
}

/**
 * An agent over real HTTP that speaks OpenAI-compatible Chat Completions, its replies written
 * by the test: `script(messages)` decides each answer. `GET {base}/models` answers 200.
 */
export async function startScriptedAgent(script: (messages: ScriptedMessage[]) => ScriptedReply) {
  let calls = 0;
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET" && req.url === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [] }));
      return;
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(await readBody(req)) as { messages: ScriptedMessage[] };
    const reply = script(body.messages);
    calls++;
    const toolCalls = (reply.tool_calls ?? []).map((call, i) => ({
      id: `call_${calls}_${i}`,
      type: "function",
      function: { name: call.name, arguments: call.raw_arguments ?? JSON.stringify(call.arguments) },
    }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${calls}`,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: reply.content,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
          },
        ],
      }),
    );
  };
  const server = createServer(asyncListener(answer));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An agent that announces what it will do, calls `lookup_order`, then answers: text in two steps of one turn. */
export function talksBeforeItsToolCall(announcement: string, answer: string) {
  return (messages: ScriptedMessage[]): ScriptedReply =>
    messages.at(-1)?.role === "tool"
      ? { content: answer }
      : { content: announcement, tool_calls: [{ name: "lookup_order", arguments: { order_id: "A-100" } }] };
}
