import { z } from "zod";
import { MCP_PATH } from "../../engine/mcp-conversations.js";
import type { Api, ApiDeps } from "../context.js";
import { mcpRefusal, serveMcpRequest } from "../mcp-request.js";

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
        const refused = mcpRefusal(found);
        return reply.code(refused.status).type("application/json").send(refused.body);
      }
      // The SDK writes the response itself: the headers set so far (request id, rate limit) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      await serveMcpRequest(found, request.raw, reply.raw, request.body);
    },
  });
}
