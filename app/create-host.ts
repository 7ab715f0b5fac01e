import type { Server } from "node:http";
import type { Config } from "../server/config.js";
import { createService, type CreateServiceOptions, type Service } from "../server/create-service.js";
import { createLogger } from "../server/log.js";
import { createGitHubIntegration } from "./github.js";
import { createHttpServer } from "./http-server.js";

export interface Host {
  service: Service;
  /** One port for everything: GitHub webhooks and the /v1 API. Not listening yet. */
  server: Server;
  /** Stops the check-run loop, then the service. */
  close(): Promise<void>;
}

/** The whole process but its port: the service, and the GitHub App on it when configured. */
export async function createHost(config: Config, options: CreateServiceOptions = {}): Promise<Host> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  const github = config.github ? await createGitHubIntegration(config.github, log) : undefined;
  const service = await createService(config, { ...options, log, ...(github ? { tasks: (deps) => github.tasks(deps) } : {}) });
  if (github) log.info(`GitHub integration on: webhooks at ${github.path}`);
  else log.warn(`GitHub integration off: ${config.githubOff}`);
  let middleware;
  try {
    middleware = github && (await github.middleware(service.deps));
  } catch (error) {
    await service.close();
    throw error;
  }
  const server = createHttpServer({ api: service.api, github: github && middleware && { path: github.path, middleware } });
  const stopReconciling = github?.startReconciling(service.deps);
  return {
    service,
    server,
    async close() {
      stopReconciling?.();
      await service.close();
    },
  };
}
