import { createServer, type Server } from "node:http";
import type { Api } from "../server/http/context.js";
import type { NodeMiddleware } from "./github.js";
import type { AppSetup } from "./setup/setup-page.js";

export interface HttpServerOptions {
  api: Api;
  /** GitHub webhooks, when the App is configured; they must see the raw body, so they come first. */
  github?: { path: string; middleware: NodeMiddleware } | undefined;
  /** The page that creates the GitHub App, while it has no credentials. */
  setup?: AppSetup | undefined;
}

/** One port for everything: GitHub webhooks to Probot, the App's setup page, every other request to the /v1 API. */
export function createHttpServer({ api, github, setup }: HttpServerOptions): Server {
  return createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "/";
    if (setup?.handles(path)) {
      void setup.handle(req, res);
      return;
    }
    if (github && path === github.path) {
      void github.middleware(req, res, () => api.routing(req, res));
      return;
    }
    api.routing(req, res);
  });
}
