import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { asyncListener } from "./async-listener.js";
import { readBody } from "../../examples/agent/server.js";

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook consumer on a local port, as a real one: it records each request, and answers as the
 * test says (2xx, an error status, never, or not at all: down).
 */
export async function startWebhookReceiver() {
  const received: ReceivedDelivery[] = [];
  let answer: { status: number } | "hang" = { status: 204 };
  const hanging = new Set<() => void>();
  let server: Server | undefined;
  let port = 0;

  async function listen(): Promise<void> {
    const receive = async (req: IncomingMessage, res: ServerResponse) => {
      const body = await readBody(req);
      received.push({ headers: req.headers, body, at: Date.now() });
      if (answer === "hang") {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(answer.status).end();
    };
    server = createServer(asyncListener(receive));
    await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
    port = (server!.address() as AddressInfo).port;
  }
  await listen();

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answerWith(next: { status: number } | "hang") {
      answer = next;
    },
    /** Stops listening: connections are refused until `up`. */
    async down(): Promise<void> {
      for (const end of hanging) end();
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        server!.closeAllConnections();
      });
    },
    /** Listens again on the same port. */
    up: listen,
    /** The distinct events received (by webhook-id), with their bodies. */
    events(): Map<string, string> {
      return new Map(received.map((r) => [r.headers["webhook-id"] as string, r.body]));
    },
    close: async () => {
      for (const end of hanging) end();
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        server!.closeAllConnections();
      });
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
