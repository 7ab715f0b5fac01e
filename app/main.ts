import type { AddressInfo } from "node:net";
import { readConfig, ConfigError } from "../server/config.js";
import { createService } from "../server/create-service.js";
import { coerceError } from "../server/errors.js";
import { createLogger } from "../server/log.js";
import { createGitHubMiddleware } from "./github.js";
import { createHttpServer } from "./http-server.js";

async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger({ level: config.logLevel });
  // Without its writer the service could acknowledge nothing: better to stop and be restarted.
  const service = await createService(config, { log, onFatal: () => process.exit(1) });

  let github;
  if (config.github) {
    github = { path: config.github.webhookPath, middleware: await createGitHubMiddleware(config.github, log) };
    log.info(`GitHub integration on: webhooks at ${config.github.webhookPath}`);
  } else {
    log.warn("GitHub integration off: set APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH) and WEBHOOK_SECRET to turn it on");
  }

  const server = createHttpServer({ api: service.api, github });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  log.info({ port, db: config.dbPath }, `assure listening on http://${config.host}:${port} (database ${config.dbPath})`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`Received ${signal}; closing`);
    server.close();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: coerceError(error) }, "Failed to close cleanly");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((raw: unknown) => {
  const error = coerceError(raw);
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
