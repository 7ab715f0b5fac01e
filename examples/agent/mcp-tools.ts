import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export type RunTool = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/**
 * The tools as an MCP server serves them (assure's mocks, at the URL a request names): listed once,
 * then each call made there. The text of a result is read as JSON where it is JSON.
 */
export async function mcpTools(url: string): Promise<{ run: RunTool; close: () => Promise<void> }> {
  const client = new Client({ name: "example-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const { tools } = await client.listTools();
  const names = new Set(tools.map((tool) => tool.name));
  return {
    async run(name, args) {
      if (!names.has(name)) return { error: `unknown tool ${name}` };
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as { type: string; text?: string }[];
      const text = content.find((item) => item.type === "text")?.text ?? "null";
      try {
        const value: unknown = JSON.parse(text);
        return value && typeof value === "object" && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : { result: value };
      } catch {
        return { result: text };
      }
    },
    close: () => client.close(),
  };
}
