import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { MCP_PATH, type McpLiveConversation } from "../../engine/mcp-conversations.js";
import type { Api, ApiDeps } from "../context.js";

/** A JSON-RPC error with no request to answer (the MCP transport's own form of refusal). */
const refusal = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });

/** The answers that are not a mock's: the agent sees them as a tool error. */
const ERRORS = new Set(["unknown_tool", "invalid_arguments", "no_mock"]);

/** An MCP server for one request of a live conversation: the plan's tools, answered from their mocks. */
function serverOf(conversation: McpLiveConversation): Server {
  // The low-level server: the spec's tools come with JSON Schemas of their own, not zod shapes.
  const server = new Server({ name: "assure-mocks", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    conversation.listed();
    return {
      tools: conversation.tools.map((tool): McpTool => ({
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        inputSchema: {
          type: "object",
          ...(tool.parameters as Record<string, unknown> | undefined),
        } as McpTool["inputSchema"],
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const answer = conversation.call(request.params.name, request.params.arguments ?? {});
    return {
      content: [{ type: "text", text: JSON.stringify(answer.result) }],
      ...(ERRORS.has(answer.source.kind) ? { isError: true } : {}),
    };
  });
  return server;
}

/**
 * The MCP server of each live conversation whose agent runs its own tools, at `/mcp/{token}`
 * (streamable HTTP, stateless: each POST carries its JSON-RPC messages and is answered with JSON).
 * The token is the capability: no key, but the public budget per address and the body limit. Once
 * the conversation has ended its URL answers 410, an unknown one 404, both as JSON-RPC errors.
 */
export function registerMcpRoutes(api: Api, deps: ApiDeps): void {
  api.route({
    method: "POST",
    url: `${MCP_PATH}/:token`,
    config: { limit: "public", audited: false },
    schema: { hide: true, params: z.object({ token: z.string().max(100) }) },
    async handler(request, reply) {
      const found = deps.mcp?.find(request.params.token) ?? { state: "unknown" as const };
      if (found.state !== "live") {
        const ended = found.state === "ended";
        return reply
          .code(ended ? 410 : 404)
          .type("application/json")
          .send(
            refusal(
              -32001,
              ended
                ? "This conversation has ended: its MCP server is closed."
                : "No live conversation has this MCP URL.",
            ),
          );
      }
      const server = serverOf(found);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      // The SDK writes the response itself: the headers set so far (request id, rate limit) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.raw.on("close", () => {
        void transport.close();
        void server.close();
      });
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });
}
