import { systemClock, type Clock } from "./clock.js";
import type { Config } from "./config.js";
import { buildApi } from "./http/build-api.js";
import type { Api } from "./http/context.js";
import { makeCursorCodec } from "./http/cursor.js";
import { makeIdGenerator } from "./ids.js";
import { createLogger, type Logger } from "./log.js";
import { makeEgressPolicy } from "./net/egress.js";
import { makeReadinessProbe } from "./net/readiness.js";
import { openStore, type Store } from "./store/index.js";

export interface Service {
  api: Api;
  store: Store;
  log: Logger;
  close(): Promise<void>;
}

export interface CreateServiceOptions {
  clock?: Clock;
  log?: Logger;
}

/** Assembles the service from its configuration: store (migrated), outbound policy, the /v1 API. */
export async function createService(config: Config, { clock = systemClock, log }: CreateServiceOptions = {}): Promise<Service> {
  const logger = log ?? createLogger({ level: config.logLevel });
  const store = openStore(config.dbPath, { clock, synchronous: config.dbSynchronous });
  const egress = makeEgressPolicy({ allowlist: config.egressAllowlist });
  try {
    const api = await buildApi({
      store,
      clock,
      log: logger,
      newId: makeIdGenerator(clock),
      egress,
      checkReadiness: makeReadinessProbe({
        egress,
        clock,
        timeoutMs: config.readinessTimeoutMs,
        cacheMs: config.readinessCacheMs,
      }),
      cursors: makeCursorCodec(store.cursorSecret),
      idempotencyWindowMs: config.idempotencyWindowMs,
    });
    return {
      api,
      store,
      log: logger,
      async close() {
        await api.close();
        store.close();
      },
    };
  } catch (error) {
    store.close();
    throw error;
  }
}
