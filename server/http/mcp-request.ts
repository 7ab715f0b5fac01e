import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpConversationLookup, McpLiveConversation } from "../engine/mcp-conversations.js";

/** A JSON-RPC error with no request to answer (the MCP transport's own form of refusal). */
const refusal = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });

/** The answers that are not a mock's: the agent sees them as a tool error. */
const ERRORS = new Set(["unknown_tool", "invalid_arguments", "no_mock"]);

/**
 * The MCP SDK's server side, loaded at the first request: `assure test` starts without it, and
 * most runs never need it.
 */
async function loadSdk() {
  const [server, transport, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return { ...server, ...transport, ...types };
}
let loaded: ReturnType<typeof loadSdk> | undefined;
const sdk = () => (loaded ??= loadSdk());

/** An MCP server for one request of a live conversation: the plan's tools, answered from their mocks. */
async function serverOf(conversation: McpLiveConversation): Promise<Server> {
  const { Server, ListToolsRequestSchema, CallToolRequestSchema } = await sdk();
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
 * The answer to a request at a conversation's MCP URL that is not live: 410 once its conversation
 * has ended, 404 for a token never minted, each a JSON-RPC error.
 */
export function mcpRefusal(found: Exclude<McpConversationLookup, McpLiveConversation>): {
  status: number;
  body: string;
} {
  const ended = found.state === "ended";
  return {
    status: ended ? 410 : 404,
    body: refusal(
      -32001,
      ended ? "This conversation has ended: its MCP server is closed." : "No live conversation has this MCP URL.",
    ),
  };
}

/**
 * Answers one request of a live conversation's MCP client (streamable HTTP, stateless: its
 * JSON-RPC messages answered with JSON) with the official SDK's transport, which writes the
 * response itself. `body` is the request's JSON when it was read already; else the transport reads it.
 */
export async function serveMcpRequest(
  conversation: McpLiveConversation,
  request: IncomingMessage,
  response: ServerResponse,
  body?: unknown,
): Promise<void> {
  const server = await serverOf(conversation);
  const { StreamableHTTPServerTransport } = await sdk();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  response.on("close", () => {
    void transport.close();
    void server.close();
  });
  await transport.handleRequest(request, response, body);
}
