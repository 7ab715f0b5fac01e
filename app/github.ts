import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GitHubAppConfig } from "../server/config.js";
import type { Logger } from "../server/log.js";
import { assureApp } from "./index.js";

export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next?: () => void) => unknown;

/**
 * Probot, configured from our config, verifying and receiving GitHub webhooks at `webhookPath`.
 * Probot (and Octokit with it) is loaded here, only when the App is configured: about 25 MB of
 * memory that a service without GitHub credentials does not carry.
 */
export async function createGitHubMiddleware(github: GitHubAppConfig, log: Logger): Promise<NodeMiddleware> {
  const { createNodeMiddleware, Probot } = await import("probot");
  const privateKey = github.privateKey ?? readFileSync(github.privateKeyPath!, "utf8");
  const probot = new Probot({
    appId: github.appId,
    privateKey: privateKey.replace(/\\n/g, "\n"),
    secret: github.webhookSecret,
    log: log.child({ component: "github" }),
    webhookPath: github.webhookPath,
  });
  return createNodeMiddleware(assureApp, { probot, webhooksPath: github.webhookPath });
}
