import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "../server/errors.js";
import type { Api } from "../server/http/context.js";
import { toEnvelope } from "../server/http/error-response.js";
import { rateLimitHeaders, type Limits } from "../server/limits/limits.js";
import type { NodeMiddleware } from "./github.js";
import type { AppSetup } from "./setup/setup-page.js";
import { MAX_DELIVERY_BYTES, makeBytesBudget, readDeliveryBody } from "./webhooks/read-delivery-body.js";

export interface HttpServerOptions {
  api: Api;
  /** GitHub webhooks, when the App is configured; they must see the raw body, so they come first. */
  github?: { path: string; middleware: NodeMiddleware; secret: string } | undefined;
  /** The page that creates the GitHub App, while it has no credentials. */
  setup?: AppSetup | undefined;
  /** GitHub's deliveries spend `githubWebhooks`; every other request is limited by the API itself. */
  limits?: Pick<Limits, "githubWebhooks"> | undefined;
  newRequestId?: () => string;
  /** A slow client (slowloris) cannot hold a connection: its headers must come within `headersMs`, its whole request within `requestMs`. */
  timeouts?: { headersMs: number; requestMs: number };
}

/** One port for everything: GitHub webhooks to Probot, the App's setup page, every other request to the /v1 API. */
export function createHttpServer({
  api,
  github,
  setup,
  limits,
  newRequestId = () => "request",
  timeouts = { headersMs: 10_000, requestMs: 60_000 },
}: HttpServerOptions): Server {
  const options = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: Math.max(timeouts.requestMs, timeouts.headersMs),
    // How often Node looks for connections past those deadlines (its default, 30 s, would let a slow client stay that long).
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
  };
  // Bodies of deliveries not yet verified, all together: at most two of GitHub's largest.
  const unverified = makeBytesBudget(2 * MAX_DELIVERY_BYTES);
  const server = createServer(options, (req, res) => {
    const path = req.url?.split("?")[0] ?? "/";
    if (setup?.handles(path)) {
      void setup.handle(req, res);
      return;
    }
    if (github && path === github.path) {
      void receiveFromGitHub(req, res, () => github.middleware(req, res, () => api.routing(req, res)));
      return;
    }
    api.routing(req, res);
  });
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) =>
    refuseMalformed(error, socket),
  );
  return server;

  /**
   * A request Node's parser refused before any route saw it (headers over 16 KiB, a method it does
   * not know, a broken request line, too slow): answered in the envelope like every refusal, and
   * the connection closed.
   */
  function refuseMalformed(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const refusal = refusalOf(error);
    if (socket.writable) {
      const requestId = newRequestId();
      const body = JSON.stringify(toEnvelope(refusal, requestId));
      const headers = {
        ...refusal.headers,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "x-request-id": requestId,
        connection: "close",
      };
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${head.join("")}\r\n${body}`);
    }
    socket.destroy();
  }

  function refusalOf(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): ApiError {
    switch (error.code) {
      case "HPE_HEADER_OVERFLOW":
        return new ApiError("HEADERS_TOO_LARGE", {
          message: "The request's headers are over 16 KiB: a cursor or token that long is not one the API gave.",
        });
      case "ERR_HTTP_REQUEST_TIMEOUT":
        return new ApiError("REQUEST_TIMEOUT", { message: "The request did not arrive in time: send it again." });
      case "HPE_INVALID_METHOD": {
        // The request line is what the parser read: its path says which methods would do.
        const path = /^\S+ (\/\S*)/.exec(error.rawPacket?.toString("latin1") ?? "")?.[1]?.split("?")[0] ?? "/";
        const allowed = api.allowedMethods(path);
        return new ApiError("METHOD_NOT_ALLOWED", {
          message: `That method is not one the API serves${allowed.length > 0 ? `; use ${allowed.join(", ")}` : ""}.`,
          headers: allowed.length > 0 ? { allow: allowed.join(", ") } : {},
        });
      }
      default:
        return new ApiError("VALIDATION_FAILED", { message: "The request is not well-formed HTTP/1.1." });
    }
  }

  /**
   * A delivery, before Probot sees it: within the address's budget, its headers there, no bigger
   * than GitHub sends (refused by Content-Length before a byte is read, cut off as it streams
   * otherwise), and signed — a body that does not verify is dropped unread by anyone else.
   */
  async function receiveFromGitHub(req: IncomingMessage, res: ServerResponse, pass: () => unknown): Promise<void> {
    const budget = limits?.githubWebhooks;
    const outcome = budget && (await budget.take(`address:${req.socket.remoteAddress ?? "unknown"}`));
    if (outcome && !outcome.allowed) {
      return refuse(
        res,
        new ApiError("RATE_LIMITED", {
          message: `Too many webhook deliveries from this address: at most ${outcome.limit} a minute.`,
        }),
        rateLimitHeaders(outcome, Date.now()),
      );
    }
    if (req.method !== "POST") return void pass();
    if (Number(req.headers["content-length"] ?? 0) > MAX_DELIVERY_BYTES) {
      return refuse(res, tooLarge(), { connection: "close" }, req);
    }
    const missing = ["x-github-event", "x-github-delivery", "x-hub-signature-256"].filter(
      (name) => !String(req.headers[name] ?? "").trim(),
    );
    if (missing.length > 0) {
      return refuse(
        res,
        new ApiError("VALIDATION_FAILED", {
          message: `A GitHub delivery carries ${missing.join(", ")}.`,
          details: missing.map((name) => ({ path: `headers.${name}`, message: "required, not empty" })),
        }),
      );
    }
    const read = await readDeliveryBody(req, github!.secret, unverified);
    if (read.kind === "aborted") return void req.destroy();
    if (read.kind === "busy") {
      return refuse(
        res,
        new ApiError("RATE_LIMITED", {
          message: "Too many deliveries are being read at once: try again shortly.",
          headers: { "retry-after": "5" },
        }),
        { connection: "close" },
        req,
      );
    }
    if (read.kind === "too_large") return refuse(res, tooLarge(), { connection: "close" }, req);
    if (read.kind === "bad_signature") {
      return refuse(
        res,
        new ApiError("VALIDATION_FAILED", {
          message: "The delivery's X-Hub-Signature-256 does not match its body and the webhook secret.",
          details: [{ path: "headers.x-hub-signature-256", message: "does not verify" }],
        }),
      );
    }
    // Probot reads the body read here (webhooks.js takes `rawBody` with an object `body`), and verifies it again.
    Object.assign(req, { rawBody: read.body, body: {} });
    pass();
  }

  function refuse(
    res: ServerResponse,
    error: ApiError,
    headers: Record<string, string | number> = {},
    req?: IncomingMessage,
  ): void {
    const requestId = newRequestId();
    res.writeHead(error.status, {
      ...error.headers,
      ...headers,
      "content-type": "application/json",
      "x-request-id": requestId,
    });
    // A body left unread is not waited for: the connection closes once the answer is out.
    res.end(JSON.stringify(toEnvelope(error, requestId)), () => req?.destroy());
  }
}

const tooLarge = () =>
  new ApiError("PAYLOAD_TOO_LARGE", { message: `A GitHub delivery is at most ${MAX_DELIVERY_BYTES} bytes.` });
