import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MCP_PATH } from "../../../server/engine/mcp-conversations.js";
import { ApiError, coerceError } from "../../../server/errors.js";
import { toEnvelope } from "../../../server/http/error-envelope.js";
import { mcpRefusal, serveMcpRequest } from "../../../server/http/mcp-request.js";
import {
  answerOtlpExport,
  MAX_OTLP_BODY_BYTES,
  otlpEncodingOf,
  type ReadExport,
} from "../../../server/http/otlp-export.js";
import { readTraceExport } from "../../../server/trace-reader/read-export.js";
import { PAGE_HEADERS } from "../../../server/http/routes/pages.js";
import type { LocalRunner } from "../../../server/local/local-runner.js";
import { NOT_FOUND_PAGE } from "../../../server/pages/layout.js";
import { renderDecisionPage } from "../../../server/pages/decision-page.js";
import { loadDecisionPage, loadRunPage, type PageContext } from "../../../server/pages/load-pages.js";
import { renderRunPage } from "../../../server/pages/run-page.js";
import { PAGE_CSS } from "../../../server/pages/styles.js";

export interface LocalServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** What an agent's OTEL_EXPORTER_OTLP_ENDPOINT is: its spans go to `{this}/v1/traces`. */
  otlpEndpoint: string;
  /** Serves this runner's pages, OTLP receiver and MCP servers from now on. */
  attach(runner: Pick<LocalRunner, "store" | "pages" | "clock" | "projectId" | "liveTraces" | "mcp">): void;
  close(): Promise<void>;
}

type Runner = Parameters<LocalServer["attach"]>[0];

/** Reads a request's body, at most `limit` bytes; undefined when it is larger. */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function sendError(response: ServerResponse, error: ApiError) {
  response
    .writeHead(error.status, { "content-type": "application/json" })
    .end(JSON.stringify(toEnvelope(error, "local")));
}

/** Exports are read in this process: it serves no one but the agents under test. */
const readInProcess: ReadExport = async (body, encoding, contentEncoding) =>
  readTraceExport(body, encoding, contentEncoding);

/** `POST /otlp/v1/traces`, answered by the service's own code: no key on loopback, the local project's conversations. */
async function exportTraces(runner: Runner, request: IncomingMessage, response: ServerResponse) {
  try {
    const encoding = otlpEncodingOf(request.headers["content-type"]);
    const body = await readBody(request, MAX_OTLP_BODY_BYTES);
    if (!body) {
      throw new ApiError("PAYLOAD_TOO_LARGE", { message: `The export is larger than ${MAX_OTLP_BODY_BYTES} bytes.` });
    }
    const answer = await answerOtlpExport(runner.liveTraces, readInProcess, runner.projectId, {
      body,
      encoding,
      contentEncoding: request.headers["content-encoding"],
    });
    response.writeHead(200, { "content-type": answer.contentType }).end(answer.body);
  } catch (raw) {
    if (!(raw instanceof ApiError)) throw raw;
    // The rest of a refused body is not read: the connection closes with the answer.
    response.shouldKeepAlive = false;
    sendError(response, raw);
  }
}

/** `POST /mcp/{token}`: a live conversation's mocked tools, served as the service serves them. */
async function serveMcp(runner: Runner, token: string, request: IncomingMessage, response: ServerResponse) {
  const found = runner.mcp.find(token);
  if (found.state !== "live") {
    const refused = mcpRefusal(found);
    return void response.writeHead(refused.status, { "content-type": "application/json" }).end(refused.body);
  }
  await serveMcpRequest(found, request, response);
}

async function servePage(runner: Runner, url: URL, response: ServerResponse) {
  const { store, pages, clock } = runner;
  const context: PageContext = {
    store,
    pages,
    githubWebUrl: "https://github.com",
    now: () => clock.now().toISOString(),
  };
  const send = (status: number, type: string, body: string) => {
    response.writeHead(status, { ...PAGE_HEADERS, "content-type": type }).end(body);
  };
  if (url.pathname === "/assets/page.css") return send(200, "text/css; charset=utf-8", PAGE_CSS);
  const exp = url.searchParams.get("exp") ?? undefined;
  const sig = url.searchParams.get("sig") ?? undefined;
  const link = `${url.pathname}?exp=${encodeURIComponent(exp ?? "")}&sig=${encodeURIComponent(sig ?? "")}`;
  const page = /^\/(runs|decisions)\/([A-Za-z0-9_-]{1,100})$/.exec(url.pathname);
  try {
    if (page?.[1] === "runs") {
      const run = await store.getRun(page[2]!);
      if (run && (await pages.verify("run", run.run_id, run.project_id, exp, sig))) {
        const query = {
          page: url.searchParams.get("page") ?? undefined,
          find: url.searchParams.get("find") ?? undefined,
        };
        return send(200, "text/html; charset=utf-8", renderRunPage(await loadRunPage(context, run, link, query)));
      }
    }
    if (page?.[1] === "decisions") {
      const decision = await store.getDecision(page[2]!);
      if (decision && (await pages.verify("decision", decision.decision_id, decision.project_id, exp, sig))) {
        return send(
          200,
          "text/html; charset=utf-8",
          renderDecisionPage(await loadDecisionPage(context, decision, link)),
        );
      }
    }
    send(404, "text/html; charset=utf-8", NOT_FOUND_PAGE);
  } catch (error) {
    send(500, "text/plain; charset=utf-8", `The page could not be rendered: ${(error as Error).message}`);
  }
}

/**
 * `assure test`'s server on 127.0.0.1: the evidence pages of the local database (rendered as the
 * service renders them, opened by the same signed links, so another user of this machine cannot
 * browse them by guessing), and for agents that run their own tools the service's OTLP receiver
 * (`/otlp/v1/traces`, no key: the spans of conversations not held are rejected, and trace ids are
 * unguessable) and the conversations' MCP servers (`/mcp/{token}`, the token the capability).
 * Started before the engine, which mints MCP URLs under its origin; `attach` gives it the runner.
 * A request naming another host is refused: a web page cannot reach it by DNS rebinding.
 */
export async function startLocalServer(port = 0): Promise<LocalServer> {
  let runner: Runner | undefined;
  let hosts = new Set<string>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const refuse = (status: number, message: string) =>
      response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(message);
    if (!hosts.has((request.headers.host ?? "").toLowerCase())) return refuse(421, "Not this host");
    if (!runner) return refuse(503, "Starting");
    const attached = runner;
    const mcp = new RegExp(`^${MCP_PATH}/([A-Za-z0-9_-]{1,100})$`).exec(url.pathname);
    const handled =
      request.method === "POST" && url.pathname === "/otlp/v1/traces"
        ? exportTraces(attached, request, response)
        : request.method === "POST" && mcp
          ? serveMcp(attached, mcp[1]!, request, response)
          : request.method === "GET"
            ? servePage(attached, url, response)
            : Promise.resolve(void refuse(405, "Method not allowed"));
    handled.catch((raw: unknown) => {
      const error = coerceError(raw);
      if (!response.headersSent) refuse(500, `assure test could not answer: ${error.message}`);
      else response.destroy(error);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  hosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
  const origin = `http://127.0.0.1:${bound}`;
  return {
    origin,
    otlpEndpoint: `${origin}/otlp`,
    attach(next) {
      runner = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
