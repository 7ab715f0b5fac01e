import { coerceError } from "./errors.js";
import { makeLiveTraces } from "./engine/traces/live-traces.js";
import { systemClock, type Clock } from "./clock.js";
import type { Deprecation } from "./contract/index.js";
import type { Evaluator } from "./evaluate/evaluator.js";
import type { Config } from "./config.js";
import { buildApi } from "./http/build-api.js";
import { makeApiActivity } from "./http/api-activity.js";
import { makeLimits } from "./limits/limits.js";
import { openSharedLimits, type SharedLimits } from "./limits/open-shared-limits.js";
import { outsideAudit } from "./store/audit-scope.js";
import type { Api, ApiDeps } from "./http/context.js";
import { makeCursorCodec } from "./http/cursor.js";
import { makeIdGenerator } from "./ids.js";
import { createLogger, type Logger } from "./log.js";
import { makeEgressPolicy } from "./net/egress.js";
import { makeReadinessProbe } from "./net/readiness.js";
import { openServiceStore, type ServiceStore } from "./store/service-store.js";
import { openPostgresServiceStore } from "./store/open-postgres-store.js";
import type { TaskList, Worker } from "./engine/worker.js";
import { makeRunEngine } from "./engine/run-engine.js";
import { makeMcpConversations } from "./engine/mcp-conversations.js";
import { makeOidcVerifier } from "./auth/github-oidc.js";
import { PAGE_LINK_SECRET, makePageLinks } from "./pages/page-links.js";
import { makeWebhookDeliverer } from "./webhooks/deliverer.js";
import { LATEST_MIGRATION } from "./store/migrations/index.js";
import type { CommitGate } from "./releases/commit-gate.js";
import { startSpecReader } from "./spec-reader/spec-reader.js";
import { startTraceReader } from "./trace-reader/trace-reader.js";

export interface Service {
  api: Api;
  store: ServiceStore;
  log: Logger;
  worker: Worker;
  /** What the API's routes and use cases are given: the GitHub App acts through the same. */
  deps: ApiDeps;
  /** From now on /readyz answers 503 and the engine claims no more runs (those in hand go on): the service is about to stop. */
  drain(): void;
  /** Stops the engine (finishing or handing back runs in hand), then the API and the database. */
  close(): Promise<void>;
}

export interface CreateServiceOptions {
  clock?: Clock;
  log?: Logger;
  /** Tests shorten the agent's retry backoff. */
  agentBackoffMs?: (attempt: number) => number;
  /** How long close() lets runs in hand finish before handing them back. */
  stopGraceMs?: number;
  /** Called if the service can no longer write (its writer thread stopped): the process should end. */
  onFatal?: (error: Error) => void;
  /** What the API announces as deprecated; the contract's DEPRECATIONS unless given. */
  deprecations?: readonly Deprecation[];
  /** The evaluator families every run gets; all of EVALUATORS unless given. */
  evaluators?: readonly Evaluator[];
  /**
   * What an integration (the GitHub App) adds, made from what the API has (its store holds what the
   * App needs): tasks for the run engine's worker, and the door through which the API asks the App
   * to gate a commit.
   */
  integrate?: (deps: ApiDeps) => Promise<Integration>;
}

export interface Integration {
  tasks?: TaskList | undefined;
  commitGate?: CommitGate | undefined;
}

/** Assembles the service from its configuration: store (migrated), outbound policy, the /v1 API. */
export async function createService(
  config: Config,
  {
    clock = systemClock,
    log,
    agentBackoffMs,
    stopGraceMs = 10_000,
    onFatal,
    deprecations,
    evaluators,
    integrate,
  }: CreateServiceOptions = {},
): Promise<Service> {
  const logger = log ?? createLogger({ level: config.logLevel });
  let writerStopped = false;
  let draining = false;
  const store = config.databaseUrl
    ? await openPostgresServiceStore(config.databaseUrl, {
        clock,
        encryptionKey: config.encryptionKey!, // required with a database URL (readConfig)
        maxConnections: config.databasePoolSize,
      })
    : await openServiceStore(config.dbPath, {
        clock,
        synchronous: config.dbSynchronous,
        encryptionKey: config.encryptionKey,
        onFailure(error) {
          writerStopped = true;
          logger.fatal({ err: error }, "The store's writer stopped: nothing can be written any more");
          onFatal?.(error);
        },
      });
  let sharedLimits: SharedLimits | undefined;
  try {
    sharedLimits = await openSharedLimits({
      redisUrl: config.redisUrl,
      redisKeyPrefix: config.redisKeyPrefix,
      databaseUrl: config.databaseUrl,
      log: logger,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  if (sharedLimits) {
    logger.info(`Rate limits count in ${sharedLimits.store === "redis" ? "Redis" : "PostgreSQL"}, across every node`);
  }
  const closeStores = async () => {
    await sharedLimits?.close();
    await store.close();
  };
  const egress = makeEgressPolicy({ allowlist: config.egressAllowlist });
  const newId = makeIdGenerator(clock);
  let worker: Worker | undefined;
  const apiActivity = makeApiActivity();
  const mcp = makeMcpConversations({ baseUrl: config.baseUrl });
  const liveTraces = makeLiveTraces();
  const specReader = startSpecReader();
  const traceReader = startTraceReader({ maxPendingBytes: config.otlpQueueBytes });
  const deps: ApiDeps = {
    specReader,
    traceReader,
    liveTraces,
    activity: apiActivity,
    limits: makeLimits(config.limits, sharedLimits?.limiterFor),
    bodyLimits: { body: config.maxBodyBytes, spec: config.maxSpecBytes },
    store,
    clock,
    log: logger,
    newId,
    // The engine works for no request: what it writes is not a request's audit event.
    nudgeEngine: () => outsideAudit(() => worker?.nudge()),
    egress,
    checkReadiness: makeReadinessProbe({
      egress,
      clock,
      timeoutMs: config.readinessTimeoutMs,
      cacheMs: config.readinessCacheMs,
    }),
    cursors: makeCursorCodec(store.cursorSecret),
    idempotencyWindowMs: config.idempotencyWindowMs,
    publicBaseUrl: config.baseUrl,
    mcp,
    deprecations,
    verifyOidcToken: config.oidc.audience
      ? makeOidcVerifier({ ...config.oidc, audience: config.oidc.audience }, clock)
      : undefined,
    githubWebUrl: config.github?.webUrl,
    serviceReadiness: async () => {
      const reasons = [
        ...(draining ? ["draining: the service is stopping"] : []),
        ...(writerStopped ? ["the store's writer stopped: nothing can be written"] : []),
        ...(config.workers > 0 && !worker?.started ? ["the run engine is not running"] : []),
      ];
      try {
        const schema = await store.schemaVersion();
        if (schema !== LATEST_MIGRATION) reasons.push(`the database is at schema ${schema}, not ${LATEST_MIGRATION}`);
      } catch (error) {
        reasons.push(`the database does not answer: ${coerceError(error).message}`);
      }
      return reasons;
    },
    pages: makePageLinks({
      secret: async () => (await store.getSecretSetting(PAGE_LINK_SECRET))!,
      now: () => clock.now(),
      ttlSeconds: config.pageLinkTtlSeconds,
    }),
  };
  let moreTasks: TaskList;
  try {
    const integration = (await integrate?.(deps)) ?? {};
    moreTasks = integration.tasks ?? {};
    deps.commitGate = integration.commitGate;
  } catch (error) {
    await closeStores();
    throw error;
  }
  worker = makeRunEngine({
    config,
    store,
    clock,
    log: logger,
    newId,
    egress,
    liveTraces,
    mcp,
    evaluators,
    agentBackoffMs,
    tasks: moreTasks,
  });
  // A claimed delivery is the deliverer's for as long as a run is a worker's: after a crash, both are taken up again once it lapses.
  const deliverer = makeWebhookDeliverer({
    store,
    clock,
    egressAllowlist: config.egressAllowlist,
    log: logger,
    retryScale: config.webhookRetryScale,
    leaseMs: config.workerLeaseMs,
    pace: { busy: apiActivity.busy, perSecond: config.webhookRateUnderLoad },
  });
  try {
    const api = await buildApi(deps);
    deliverer.start();
    if (!config.judge) {
      logger.warn(
        "No LLM judge configured (ASSURE_JUDGE_BASE_URL, ASSURE_JUDGE_MODEL): gates on judged metrics will be inconclusive",
      );
    }
    if (config.workers > 0) worker.start();
    else logger.warn("Run engine off (ASSURE_WORKERS=0): runs are accepted and stay queued");
    return {
      api,
      store,
      log: logger,
      worker,
      deps,
      drain() {
        draining = true;
        worker.pause();
      },
      async close() {
        draining = true;
        await worker.stop(stopGraceMs);
        await deliverer.stop();
        await api.close();
        await specReader.close();
        await traceReader.close();
        await closeStores();
      },
    };
  } catch (error) {
    await closeStores();
    throw error;
  }
}
