import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface CannedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * An agent that answers every request with the next canned answer (a string as server-sent
 * events, else JSON), and keeps what it was sent: to check a protocol's wire form both ways.
 */
export async function startCannedAgent() {
  const answers: unknown[] = [];
  const received: CannedRequest[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : undefined,
      });
      const answer = answers.shift();
      if (typeof answer === "string") res.writeHead(200, { "content-type": "text/event-stream" }).end(answer);
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
