import type { Server } from "node:http";
import type { Config } from "../server/config.js";
import { createService, type CreateServiceOptions, type Service } from "../server/create-service.js";
import { createLogger } from "../server/log.js";
import { createGitHubIntegration, type GitHubIntegration } from "./github.js";
import { createHttpServer } from "./http-server.js";
import { makeAppSetup, storedAppCredentials, type AppSetup } from "./setup/setup-page.js";

export interface Host {
  service: Service;
  /** One port for everything: GitHub webhooks, the App's setup page and the /v1 API. Not listening yet. */
  server: Server;
  /** The setup page, when the App has no credentials yet. */
  setup: AppSetup | undefined;
  /** Stops the check-run loop, then the service. */
  close(): Promise<void>;
}

/**
 * The whole process but its port: the service, and the GitHub App on it — with the credentials
 * from the environment, or those the setup page stored; without either, the setup page that
 * creates the App.
 */
export async function createHost(config: Config, options: CreateServiceOptions = {}): Promise<Host> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  let github: GitHubIntegration | undefined;
  let setup: AppSetup | undefined;
  const service = await createService(config, {
    ...options,
    log,
    integrate: async (deps) => {
      if (!config.github) return {};
      const credentials = config.githubCredentials ?? (await storedAppCredentials(deps.store));
      if (!credentials) {
        setup = makeAppSetup({ settings: config.github, store: deps.store, log, clock: deps.clock });
        return {};
      }
      github = await createGitHubIntegration({ ...config.github, ...credentials }, log);
      return github.integration(deps);
    },
  });
  if (github) log.info(`GitHub integration on: webhooks at ${github.path}`);
  else if (setup) {
    log.warn(
      `GitHub integration off: no GitHub App yet. Create it from the setup page (the token works once): ${setup.pageUrl}`,
    );
  } else log.warn(`GitHub integration off: ${config.githubOff}`);
  let middleware;
  try {
    middleware = github && (await github.middleware(service.deps));
  } catch (error) {
    await service.close();
    throw error;
  }
  const server = createHttpServer({
    api: service.api,
    github: github && middleware && { path: github.path, middleware, secret: github.webhookSecret },
    setup,
    limits: service.deps.limits,
    newRequestId: () => service.deps.newId("request"),
    timeouts: { headersMs: config.headersTimeoutMs, requestMs: config.requestTimeoutMs },
  });
  const stopReconciling = github?.startReconciling(service.deps);
  return {
    service,
    server,
    setup,
    async close() {
      stopReconciling?.();
      await service.close();
    },
  };
}
