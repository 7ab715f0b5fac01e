import type { AddressInfo } from "node:net";
import { readConfig } from "../server/config.js";
import { ConfigError, coerceError } from "../server/errors.js";
import { createLogger } from "../server/log.js";
import { createHost } from "./create-host.js";

async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger({ level: config.logLevel });
  // Without its writer the service could acknowledge nothing: better to stop and be restarted.
  const host = await createHost(config, { log, onFatal: () => process.exit(1) });
  const { server } = host;
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
    host.close().then(
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
