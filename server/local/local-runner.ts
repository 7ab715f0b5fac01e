import { mkdtempSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCOPES } from "../auth/scopes.js";
import type { Principal } from "../auth/authenticate.js";
import { systemClock, type Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { ReleaseDecision, Run, TestSpecSummary } from "../contract/index.js";
import { makeMcpConversations, type McpConversations } from "../engine/mcp-conversations.js";
import { makeRunEngine } from "../engine/run-engine.js";
import { makeLiveTraces, type LiveTraces } from "../engine/traces/live-traces.js";
import type { Worker } from "../engine/worker.js";
import { makeIdGenerator, type NewId } from "../ids.js";
import { NO_LIMITS } from "../limits/limits.js";
import type { Logger } from "../log.js";
import { makeEgressPolicy } from "../net/egress.js";
import { makeReadinessProbe } from "../net/readiness.js";
import { PAGE_LINK_SECRET, makePageLinks, type PageLinks } from "../pages/page-links.js";
import { storeSpecVersion } from "../releases/add-spec-version.js";
import { createDecision } from "../releases/create-decision.js";
import { createRun } from "../runs/create-run.js";
import type { ReadVersion } from "../spec-reader/read-spec.js";
import type { OpenDb } from "../store/db.js";
import { openServiceStore, type ServiceStore } from "../store/service-store.js";
import { toNewEnvironment, trimmed, type LocalEndpoint } from "./local-environment.js";

/** The project, agent and environment every local run belongs to: one of each per database. */
export const LOCAL_NAME = "local";

/** Who starts local runs: the user at their terminal, with every scope over their own database. */
export const LOCAL_KEY_ID = "local";

export interface LocalRunnerOptions {
  /** The service's settings from the environment: the judge, timeouts, conversation slots. */
  config: Config;
  log: Logger;
  /** A database file to keep; without it, a temporary one that close() removes. */
  dbPath?: string | undefined;
  clock?: Clock;
  /** Runs executed at once (one per spec). */
  workers?: number;
  /** Tests shorten the agent's and the judge's retry backoff. */
  agentBackoffMs?: (attempt: number) => number;
  /** The SQLite driver: better-sqlite3 unless another is given (the Action's WebAssembly SQLite). */
  openDb?: OpenDb | undefined;
  /**
   * Where this process serves agents that run their own tools (`assure test`'s loopback server):
   * conversations' MCP URLs are minted under it. Without it an environment that sends `{{mcp_url}}`
   * cannot run.
   */
  baseUrl?: string | undefined;
}

export interface LocalRunner {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  projectId: string;
  /** Signs links to the evidence pages of this database's runs and decisions. */
  pages: PageLinks;
  /** Where the database is: a temporary file unless one was given. */
  dbPath: string;
  /** The live conversations' traces, which agents' OTLP exports are attached to (`answerOtlpExport`). */
  liveTraces: LiveTraces;
  /** The live conversations whose mocked tools are served over MCP (`serveMcpRequest`). */
  mcp: McpConversations;
  /** Sets the local environment's endpoint (the agent under test): created once, changed after. */
  useEndpoint(endpoint: LocalEndpoint): Promise<string>;
  /** Stores a spec version (or finds the one it equals). */
  addSpec(version: ReadVersion): Promise<TestSpecSummary>;
  /**
   * Starts a run of each spec version against the environment, and a release decision on them all.
   * Refused (ApiError ENVIRONMENT_NOT_READY) when the agent does not answer its readiness probe.
   */
  startRuns(
    specs: readonly Pick<TestSpecSummary, "test_spec_id" | "spec_version">[],
    environmentId: string,
  ): Promise<{ runs: Run[]; decision: ReleaseDecision }>;
  /** Stops the engine (handing back unfinished runs), closes the database, removes it if temporary. */
  close(): Promise<void>;
}

/**
 * The service's run engine in this process, for `assure test`: its store (a temporary SQLite file
 * unless one is given), its worker, agents, evaluators and judge, and no HTTP server. Runs, their
 * conversations, trace and evaluations are written as the service writes them, so what a local run
 * found reads (and can be sent) like any other run. This machine's agents are reached without an
 * egress allowlist: the process runs as its user.
 */
export async function openLocalRunner({
  config,
  log,
  dbPath,
  clock = systemClock,
  workers = 4,
  agentBackoffMs,
  openDb,
  baseUrl,
}: LocalRunnerOptions): Promise<LocalRunner> {
  const temporary = dbPath ? undefined : mkdtempSync(join(tmpdir(), "assure-test-"));
  const path = dbPath ?? join(temporary!, "assure.db");
  const removeTemporary = () => temporary && rmSync(temporary, { recursive: true, force: true });
  let store: ServiceStore;
  try {
    store = await openServiceStore(path, {
      clock,
      // A temporary database need not survive a power loss; a kept one is as durable as the service's.
      synchronous: temporary ? "NORMAL" : config.dbSynchronous,
      encryptionKey: config.encryptionKey,
      // It serves no one while it runs: no writer thread to start, or to keep in memory.
      writer: "this-thread",
      openDb,
    });
  } catch (error) {
    removeTemporary();
    throw error;
  }
  const newId = makeIdGenerator(clock);
  const now = () => clock.now().toISOString();
  const egress = makeEgressPolicy({ thisMachineOpen: true });
  const liveTraces = makeLiveTraces();
  const mcp = makeMcpConversations({ baseUrl });
  const worker: Worker = makeRunEngine({
    config: { ...config, workers, maxRunsPerProject: workers },
    store,
    clock,
    log,
    newId,
    egress,
    agentBackoffMs,
    liveTraces,
    mcp,
  });
  worker.start();

  const projectId = await ensureProject(store, newId, now());
  const principal: Principal = {
    key_id: LOCAL_KEY_ID,
    name: LOCAL_NAME,
    project_id: projectId,
    scopes: new Set(SCOPES),
  };
  const checkReadiness = makeReadinessProbe({
    egress,
    clock,
    timeoutMs: config.readinessTimeoutMs,
    cacheMs: config.readinessCacheMs,
  });

  return {
    store,
    clock,
    newId,
    projectId,
    dbPath: path,
    liveTraces,
    mcp,
    pages: makePageLinks({
      secret: async () => (await store.getSecretSetting(PAGE_LINK_SECRET))!,
      now: () => clock.now(),
      ttlSeconds: config.pageLinkTtlSeconds,
    }),
    async useEndpoint(endpoint) {
      // One environment per agent URL and protocol (a kept database keeps each one's runs apart).
      let name = LOCAL_NAME;
      let existing = await store.getEnvironmentRowByName(projectId, name);
      for (
        let n = 2;
        existing && !(existing.protocol === endpoint.protocol && existing.base_url === trimmed(endpoint.base_url));
        n++
      ) {
        name = `${LOCAL_NAME}-${n}`;
        existing = await store.getEnvironmentRowByName(projectId, name);
      }
      const row = toNewEnvironment(endpoint, {
        environment_id: existing?.environment_id ?? newId("environment"),
        project_id: projectId,
        agent_id: existing?.agent_id ?? newId("agent"),
        name,
        created_at: now(),
      });
      if (existing) {
        const {
          protocol: _protocol,
          environment_id,
          project_id: _project,
          agent_id: _agent,
          name: _name,
          created_at: _at,
          ...change
        } = row;
        await store.write([
          "updateEnvironment",
          environment_id,
          { ...change, trace_wait_ms: change.trace_wait_ms ?? null },
        ]);
        return environment_id;
      }
      await store.write(
        [
          "createAgent",
          {
            agent_id: row.agent_id,
            project_id: projectId,
            name,
            version: LOCAL_NAME,
            description: "The agent `assure test` was pointed at",
            created_at: now(),
          },
        ],
        ["createEnvironment", row],
      );
      return row.environment_id;
    },
    async addSpec(version) {
      return (await storeSpecVersion({ store, clock, newId }, projectId, version)).spec;
    },
    async startRuns(specs, environmentId) {
      const runs: Run[] = [];
      for (const spec of specs) {
        const { run } = await createRun(
          {
            store,
            clock,
            newId,
            checkReadiness,
            egress,
            idempotencyWindowMs: 60_000,
            nudgeEngine: () => worker.nudge(),
            limits: NO_LIMITS,
          },
          principal,
          { test_spec_id: spec.test_spec_id, spec_version: spec.spec_version, environment_id: environmentId },
          `local-${randomUUID()}`,
        );
        runs.push(run);
      }
      const { decision } = await createDecision({ store, clock, newId }, projectId, {
        subject: { run_ids: runs.map((run) => run.run_id) },
      });
      return { runs, decision };
    },
    async close() {
      try {
        await worker.stop(2000);
        await store.close();
      } finally {
        removeTemporary();
      }
    },
  };
}

/** The project local runs belong to: found by its name, or made. */
async function ensureProject(store: ServiceStore, newId: NewId, now: string): Promise<string> {
  const existing = await store.getProjectByName(LOCAL_NAME);
  if (existing) return existing.project_id;
  const projectId = newId("project");
  await store.write([
    "createProject",
    {
      project_id: projectId,
      name: LOCAL_NAME,
      description: "Runs made by `assure test` on this machine",
      created_at: now,
    },
  ]);
  return projectId;
}
