import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP endpoint in the shape of an agent's API base (`GET {base}/models`), for readiness.
 * It can be switched to failing answers, and it records what it was asked.
 */
export async function startAgentEndpoint() {
  let healthy = true;
  const requests: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    if (req.method === "GET" && req.url === "/v1/models") {
      res.writeHead(healthy ? 200 : 503, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          healthy ? { object: "list", data: [{ id: "example-agent", object: "model" }] } : { error: "down" },
        ),
      );
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setHealthy(value: boolean) {
      healthy = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A base URL where nothing listens: the port was free a moment ago. */
export async function unusedBaseUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

export type AgentEndpoint = Awaited<ReturnType<typeof startAgentEndpoint>>;
