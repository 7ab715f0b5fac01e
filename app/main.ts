import type { AddressInfo } from "node:net";
import { databaseLabel, readConfig } from "../server/config.js";
import { ConfigError, coerceError } from "../server/errors.js";
import { createLogger } from "../server/log.js";
import { createHost } from "./create-host.js";

/** On SIGTERM, once the shutdown delay is over: how long requests in flight may take to finish, then runs in hand. */
const REQUESTS_GRACE_MS = 2_000;
const STOP_GRACE_MS = 6_000;

async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger({ level: config.logLevel });
  // Without its writer the service could acknowledge nothing: better to stop and be restarted.
  const host = await createHost(config, { log, onFatal: () => process.exit(1), stopGraceMs: STOP_GRACE_MS });
  const { server } = host;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const database = databaseLabel(config);
  if (config.dbPathIgnored) log.warn("ASSURE_DB is not used: ASSURE_DATABASE_URL is set");
  log.info({ port, db: database }, `assure listening on http://${config.host}:${port} (database ${database})`);

  // SIGTERM: /readyz answers 503 and the engine claims no more runs; requests are still served for
  // ASSURE_SHUTDOWN_DELAY_MS (a load balancer learns of the 503 only at its next health check). Then:
  // stop accepting, let requests in flight finish (REQUESTS_GRACE_MS), let runs in hand finish or
  // hand them back (STOP_GRACE_MS), close the database, and exit 0 — within the delay and 10 s.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    host.service.drain();
    const exitAfterMs = config.shutdownDelayMs + 9_500;
    setTimeout(() => {
      log.warn(
        `Still not closed ${exitAfterMs / 1000} s after the signal: exiting; runs in hand are taken up again when their leases lapse`,
      );
      process.exit(0);
    }, exitAfterMs).unref();
    if (config.shutdownDelayMs === 0) {
      log.info(`Received ${signal}; draining`);
      close();
      return;
    }
    log.info(
      `Received ${signal}; draining: /readyz answers 503, requests are served for ${config.shutdownDelayMs} ms more`,
    );
    // First of the listeners, before any route can answer: each answer ends its connection, so a
    // client with a connection kept alive opens its next one where the balancer sends it.
    server.prependListener("request", (_request, response) => response.setHeader("connection", "close"));
    setTimeout(close, config.shutdownDelayMs);
  };
  const close = () => {
    const requestsDone = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    Promise.race([requestsDone, new Promise((resolve) => setTimeout(resolve, REQUESTS_GRACE_MS))])
      .then(() => {
        server.closeAllConnections();
        return host.close();
      })
      .then(
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
