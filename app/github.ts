import { createPrivateKey } from "node:crypto";
import { getPrivateKey } from "@probot/get-private-key";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Probot, ProbotOctokit } from "probot";
import type { GitHubAppConfig } from "../server/config.js";
import type { TaskList } from "../server/engine/worker.js";
import type { ApiDeps } from "../server/http/context.js";
import type { Logger } from "../server/log.js";
import { coerceError } from "../server/errors.js";
import { SYNC_CHECK_RUN, makeSyncCheckRun } from "./checks/sync-check-run.js";
import { makeAssureApp } from "./index.js";
import { startReconciling } from "./reconcile.js";
import { CommitToGatePayload } from "./gate/commit-to-gate.js";
import { gateCommit } from "./gate/gate-commit.js";
import { defineTask } from "../server/engine/define-task.js";
import { GATE_GITHUB_COMMIT } from "./gate/start-runs.js";
import { makeCommitGate } from "./gate/commit-gate.js";
import type { Integration } from "../server/create-service.js";
import { PROCESS_GITHUB_DELIVERY } from "./webhooks/receive-delivery.js";
import { makeProcessDelivery } from "./webhooks/process-delivery.js";

export type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next?: () => void) => unknown;

/**
 * The GitHub App, configured from our config: Probot (and Octokit with it) is loaded here, only
 * when the App is configured — about 25 MB of memory that a service without it does not carry.
 * It gives the run engine its tasks (processing deliveries, publishing check runs), the webhook
 * route's middleware, and the loop that keeps check runs up to date.
 */
export async function createGitHubIntegration(github: GitHubAppConfig, log: Logger) {
  const { createNodeMiddleware, Probot, ProbotOctokit } = await import("probot");
  const probot: Probot = new Probot({
    appId: github.appId,
    privateKey: readAppPrivateKey(github),
    secret: github.webhookSecret,
    log: log.child({ component: "github" }),
    baseUrl: github.apiBaseUrl,
    Octokit: ProbotOctokit.defaults({ retry: { retryAfterBaseValue: github.retryBaseMs } }),
  });
  // Installation tokens are cached by Probot (about an hour); GitHub's rate-limit and retry headers are honoured.
  const octokitFor = (installationId: number): Promise<ProbotOctokit> => probot.auth(installationId);

  return {
    path: github.webhookPath,
    webhookSecret: github.webhookSecret,
    /** The engine's tasks for the App, and the door through which the API asks the App to gate a commit. */
    integration(deps: ApiDeps): Integration {
      const gate = { ...deps, octokitFor, waitRetryMs: github.waitRetryMs };
      const tasks: TaskList = {
        [PROCESS_GITHUB_DELIVERY]: makeProcessDelivery(gate),
        [GATE_GITHUB_COMMIT]: defineTask(CommitToGatePayload, async (commit) => void (await gateCommit(gate, commit))),
        [SYNC_CHECK_RUN]: makeSyncCheckRun({ ...deps, baseUrl: github.publicBaseUrl, octokitFor }),
      };
      // The App's own client (its JWT): it finds the installation that reaches a repository.
      return { tasks, commitGate: makeCommitGate({ ...gate, appOctokit: () => probot.auth() }) };
    },
    middleware(deps: ApiDeps): Promise<NodeMiddleware> {
      return createNodeMiddleware(makeAssureApp(deps), { probot, webhooksPath: github.webhookPath });
    },
    startReconciling(deps: ApiDeps): () => void {
      return startReconciling({ ...deps, nudge: deps.nudgeEngine }, github.reconcileMs);
    },
  };
}

export type GitHubIntegration = Awaited<ReturnType<typeof createGitHubIntegration>>;

/**
 * The App's private key as Probot reads it (a PEM, a PEM with escaped newlines or on one line, a
 * base64 PEM, or a file), checked to be a private key at start: a wrong key stops the service
 * with a clear message rather than failing every delivery later.
 */
export function readAppPrivateKey(github: Pick<GitHubAppConfig, "privateKey" | "privateKeyPath">): string {
  const source = github.privateKey ? "PRIVATE_KEY" : "PRIVATE_KEY_PATH";
  let pem: string | null;
  try {
    pem = getPrivateKey({ env: { PRIVATE_KEY: github.privateKey, PRIVATE_KEY_PATH: github.privateKeyPath } });
    if (pem) createPrivateKey(pem);
  } catch (error) {
    throw new Error(
      `${source} is not the App's private key: ${coerceError(error).message.replace(/^\[[^\]]*\] /, "")}`,
      {
        cause: error,
      },
    );
  }
  if (!pem) throw new Error("Set PRIVATE_KEY or PRIVATE_KEY_PATH: the App's private key.");
  return pem;
}
