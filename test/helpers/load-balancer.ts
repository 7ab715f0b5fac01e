import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { asyncListener } from "./async-listener.js";

/** Headers of one hop, not passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te"]);

/** The whole of a request's or a response's body; fails if its connection ends first. */
function readAll(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on("data", (chunk: Buffer) => chunks.push(chunk));
    message.once("end", () => resolve(Buffer.concat(chunks)));
    message.once("error", reject);
    message.once("close", () => {
      if (!message.complete) reject(new Error("the connection ended before the body"));
    });
  });
}

/**
 * A node's GET /readyz status, or undefined if it did not answer (within `timeoutMs`). On a connection
 * of its own, as a balancer's checker has: never one the node is closing.
 */
export function readyStatus(baseUrl: string, timeoutMs = 1_000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = request(`${baseUrl}/readyz`, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    probe.once("timeout", () => probe.destroy());
    probe.once("error", () => resolve(undefined));
    probe.end();
  });
}

export interface LoadBalancer {
  baseUrl: string;
  /** Whether the last health check of each node (by its place in the list) found it ready. */
  ready: boolean[];
  /** How many requests each node answered. */
  answered: number[];
  /** How many connections each node refused while its last health check had found it ready (each request was sent on to another node). */
  refused: number[];
  close(): Promise<void>;
}

/**
 * A load balancer in front of service nodes, as nginx or envoy would be: round robin over the nodes
 * its own health check (GET /readyz every `checkEveryMs`) last found ready, connections to them kept
 * alive and reused. A request goes to another node only when its node refused the connection —
 * nothing was sent; any other failure is answered 502, as a request it cannot know was not acted on.
 */
export async function startLoadBalancer(upstreams: string[], { checkEveryMs = 100 } = {}): Promise<LoadBalancer> {
  const ready = upstreams.map(() => false);
  const answered = upstreams.map(() => 0);
  const refused = upstreams.map(() => 0);
  const pool = new Agent({ keepAlive: true });
  let next = 0;
  let closed = false;

  async function check(index: number): Promise<void> {
    ready[index] = (await readyStatus(upstreams[index]!)) === 200;
  }
  const checking = upstreams.map(async (_, index) => {
    while (!closed) {
      await check(index);
      await new Promise((resolve) => setTimeout(resolve, checkEveryMs));
    }
  });

  function pick(tried: Set<number>): number | undefined {
    for (let i = 0; i < upstreams.length; i++) {
      const index = (next + i) % upstreams.length;
      if (ready[index] && !tried.has(index)) {
        next = index + 1;
        return index;
      }
    }
    return undefined;
  }

  function forward(index: number, req: IncomingMessage, body: Buffer) {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      const upstream = request(`${upstreams[index]}${req.url}`, { method: req.method, headers, agent: pool }, resolve);
      upstream.once("error", reject);
      upstream.end(body);
    });
  }

  async function proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const tried = new Set<number>();
    for (;;) {
      const index = pick(tried);
      if (index === undefined) {
        res.writeHead(503, { "content-type": "text/plain" }).end("no node is ready");
        return;
      }
      tried.add(index);
      let response: IncomingMessage;
      try {
        response = await forward(index, req, body);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED") {
          refused[index]!++;
          continue;
        }
        res.writeHead(502, { "content-type": "text/plain" }).end(`node ${index}: ${String(error)}`);
        return;
      }
      const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      let answer: Buffer;
      try {
        answer = await readAll(response);
      } catch (error) {
        res.writeHead(502, { "content-type": "text/plain" }).end(`node ${index}: ${String(error)}`);
        return;
      }
      answered[index]!++;
      res.writeHead(response.statusCode!, headers).end(answer);
      return;
    }
  }

  const server = createServer(asyncListener(proxy));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ready,
    answered,
    refused,
    async close() {
      closed = true;
      await Promise.all(checking);
      pool.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
