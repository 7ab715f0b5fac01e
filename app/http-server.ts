import { createServer, type Server } from "node:http";
import type { Api } from "../server/http/context.js";
import type { NodeMiddleware } from "./github.js";

export interface HttpServerOptions {
  api: Api;
  /** GitHub webhooks, when the App is configured; they must see the raw body, so they come first. */
  github?: { path: string; middleware: NodeMiddleware } | undefined;
}

/** One port for everything: GitHub webhooks to Probot, every other request to the /v1 API. */
export function createHttpServer({ api, github }: HttpServerOptions): Server {
  return createServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (github && path === github.path) {
      void github.middleware(req, res, () => api.routing(req, res));
      return;
    }
    api.routing(req, res);
  });
}
