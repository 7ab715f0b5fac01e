import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHost } from "../../app/create-host.js";
import { issueApiKey } from "../../server/auth/issue-api-key.js";
import { systemClock, type Clock } from "../../server/clock.js";
import type { Deprecation } from "../../server/contract/index.js";
import type { Evaluator } from "../../server/evaluate/evaluator.js";
import { readConfig } from "../../server/config.js";
import type { Service } from "../../server/create-service.js";
import { makeIdGenerator } from "../../server/ids.js";
import { createLogger } from "../../server/log.js";
import { openStore, type Store } from "../../server/store/index.js";
import { openPostgresStore } from "../../server/store/open-postgres-store.js";
import { createScratchDatabase, type ScratchDatabase } from "./postgres.js";
import { makeApiClient, type ApiClient } from "./api-client.js";
import { makeResponseValidator } from "./openapi.js";
import { LOCAL_SETTINGS } from "./local-settings.js";

/**
 * The database the suite's services run on: a SQLite file each (the default), or a PostgreSQL
 * database each on the test server (ASSURE_TEST_DATABASE=postgres).
 */
export const TEST_DATABASE = process.env.ASSURE_TEST_DATABASE === "postgres" ? "postgres" : "sqlite";

export interface TestService {
  baseUrl: string;
  /** The SQLite file; unused when the service runs on PostgreSQL (`databaseUrl`). */
  dbPath: string;
  /** The service's PostgreSQL database, when it runs on one. */
  databaseUrl: string | undefined;
  /** The environment that points a process (the operator's CLI, say) at the service's database. */
  databaseEnv: Record<string, string>;
  service: Service;
  clock: Clock;
  adminToken: string;
  /** Client with the admin token. */
  admin: ApiClient;
  /** Client without a token. */
  anonymous: ApiClient;
  /** Issues an API key as the operator's CLI does: through a connection of its own. */
  issueKey(projectId: string | null, scopes?: string[]): Promise<string>;
  /** Revokes a key as the operator's CLI does; false if it was revoked already. */
  revokeKey(keyId: string): Promise<boolean>;
  /** Runs `use` on a store of its own connection to the service's database (SQLite or PostgreSQL), as an operator's would be. */
  withStore<T>(use: (store: Store) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  /** Environment variables; the run engine is off (ASSURE_WORKERS=0) unless they turn it on. */
  env?: Record<string, string>;
  dbPath?: string;
  /** Instead of the contract's DEPRECATIONS. */
  deprecations?: readonly Deprecation[];
  /** Instead of every evaluator family. */
  evaluators?: readonly Evaluator[];
  /** A port of the test's choosing (its public URL must be known before start, say); any free one unless given. */
  port?: number;
}

/** The real service on a real port with a real SQLite file in a fresh temporary folder. */
export async function startTestService({
  clock = systemClock,
  env = {},
  dbPath,
  deprecations,
  evaluators,
  port = 0,
}: StartOptions = {}): Promise<TestService> {
  const dir = dbPath ? undefined : mkdtempSync(join(tmpdir(), "assure-test-"));
  const path = dbPath ?? join(dir!, "assure.db");
  let scratch: ScratchDatabase | undefined;
  if (TEST_DATABASE === "postgres" && !dbPath && !env.ASSURE_DATABASE_URL) scratch = await createScratchDatabase();
  const config = readConfig({
    ASSURE_DB: path,
    LOG_LEVEL: "silent",
    ASSURE_READINESS_TIMEOUT_MS: "1000",
    ASSURE_WORKERS: "0",
    ...LOCAL_SETTINGS,
    ...(scratch ? { ASSURE_DATABASE_URL: scratch.url, ASSURE_ENCRYPTION_KEY: randomBytes(32).toString("base64") } : {}),
    ...env,
  });
  const host = await createHost(config, {
    clock,
    log: createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    agentBackoffMs: () => 10,
    stopGraceMs: 2000,
    ...(deprecations ? { deprecations } : {}),
    ...(evaluators ? { evaluators } : {}),
  });
  const { server, service } = host;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const newId = makeIdGenerator(clock);
  const openOwnStore = () =>
    config.databaseUrl
      ? openPostgresStore(config.databaseUrl, { clock, encryptionKey: config.encryptionKey!, maxConnections: 2 })
      : openStore(path, { clock, encryptionKey: config.encryptionKey });
  const operator = await openOwnStore();
  const issueKey = async (projectId: string | null, scopes: string[] = []) =>
    (await issueApiKey({ store: operator, clock, newId }, { projectId, scopes })).token;
  const adminToken = await issueKey(null);
  const openapi = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as Parameters<
    typeof makeResponseValidator
  >[0];
  const validate = makeResponseValidator(openapi);

  return {
    baseUrl,
    dbPath: path,
    databaseUrl: config.databaseUrl,
    databaseEnv: config.databaseUrl
      ? { ASSURE_DATABASE_URL: config.databaseUrl, ASSURE_ENCRYPTION_KEY: config.encryptionKey!.toString("base64") }
      : { ASSURE_DB: path },
    service,
    clock,
    adminToken,
    admin: makeApiClient(baseUrl, validate, adminToken),
    anonymous: makeApiClient(baseUrl, validate),
    issueKey,
    revokeKey: (keyId) => operator.revokeApiKey(keyId, clock.now().toISOString()),
    async withStore(use) {
      const store = await openOwnStore();
      try {
        return await use(store);
      } finally {
        await store.close();
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await host.close();
      await operator.close();
      await scratch?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
