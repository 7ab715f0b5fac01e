import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ApiError } from "../server/errors.js";
import type { Api } from "../server/http/context.js";
import { toEnvelope } from "../server/http/error-response.js";
import { rateLimitHeaders, type Limits } from "../server/limits/limits.js";
import type { NodeMiddleware } from "./github.js";
import type { AppSetup } from "./setup/setup-page.js";

export interface HttpServerOptions {
  api: Api;
  /** GitHub webhooks, when the App is configured; they must see the raw body, so they come first. */
  github?: { path: string; middleware: NodeMiddleware } | undefined;
  /** The page that creates the GitHub App, while it has no credentials. */
  setup?: AppSetup | undefined;
  /** GitHub's deliveries spend `githubWebhooks`; every other request is limited by the API itself. */
  limits?: Pick<Limits, "githubWebhooks"> | undefined;
  newRequestId?: () => string;
  /** A slow client (slowloris) cannot hold a connection: its headers must come within `headersMs`, its whole request within `requestMs`. */
  timeouts?: { headersMs: number; requestMs: number };
}

/** One port for everything: GitHub webhooks to Probot, the App's setup page, every other request to the /v1 API. */
export function createHttpServer({ api, github, setup, limits, newRequestId = () => "request", timeouts = { headersMs: 10_000, requestMs: 60_000 } }: HttpServerOptions): Server {
  const options = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: Math.max(timeouts.requestMs, timeouts.headersMs),
    // How often Node looks for connections past those deadlines (its default, 30 s, would let a slow client stay that long).
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
  };
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
  return server;

  async function receiveFromGitHub(req: IncomingMessage, res: ServerResponse, pass: () => unknown): Promise<void> {
    const budget = limits?.githubWebhooks;
    const outcome = budget && (await budget.take(`address:${req.socket.remoteAddress ?? "unknown"}`));
    if (!outcome || outcome.allowed) return void pass();
    const requestId = newRequestId();
    const error = new ApiError("RATE_LIMITED", { message: `Too many webhook deliveries from this address: at most ${outcome.limit} a minute.` });
    res.writeHead(429, { ...rateLimitHeaders(outcome, Date.now()), "content-type": "application/json", "x-request-id": requestId });
    res.end(JSON.stringify(toEnvelope(error, requestId)));
  }
}
