import { z } from "zod";
import type { Clock } from "../clock.js";
import type { Evaluator } from "../evaluate/evaluator.js";
import { makeLlmJudge } from "../evaluate/judges/llm-judge.js";
import type { NewId } from "../ids.js";
import type { Logger } from "../log.js";
import type { EgressPolicy } from "../net/egress.js";
import { REFRESH_RELEASE_DECISION } from "../store/release-decisions.js";
import type { ServiceStore } from "../store/service-store.js";
import { defineTask } from "./define-task.js";
import type { McpConversations } from "./mcp-conversations.js";
import { EXECUTE_RUN, makeExecuteRun } from "./tasks/execute-run.js";
import type { LiveTraces } from "./traces/live-traces.js";
import { makeWorker, type TaskList, type Worker } from "./worker.js";

/** The service's settings the run engine reads (server/config.ts). */
export interface RunEngineSettings {
  /** The LLM judge of spec metrics, when one is configured. */
  judge: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  /** Runs executed at once, and of one project. */
  workers: number;
  maxRunsPerProject: number;
  workerLeaseMs: number;
  /** Conversations held at once, and of one project. */
  maxConversations: number;
  maxConversationsPerProject: number;
}

export interface RunEngineOptions {
  config: RunEngineSettings;
  store: ServiceStore;
  clock: Clock;
  log: Logger;
  newId: NewId;
  egress: EgressPolicy;
  /** The conversations whose agents' OTLP spans are being attached; none where no OTLP route is served. */
  liveTraces?: LiveTraces | undefined;
  /** Serves the spec's tools over MCP to agents that run their own; none where no MCP route is served. */
  mcp?: McpConversations | undefined;
  /** The evaluator families every run gets; all of EVALUATORS unless given. */
  evaluators?: readonly Evaluator[] | undefined;
  /** Tests shorten the agent's and the judge's retry backoff. */
  agentBackoffMs?: ((attempt: number) => number) | undefined;
  /** Tasks an integration adds (the GitHub App's). */
  tasks?: TaskList | undefined;
}

/**
 * The run engine: a worker over the durable queue that executes runs (their conversations, then
 * their evaluation by the configured judge) and refreshes decisions when a waiver expires. The
 * service and `assure test` run the same one; not started until `start()`.
 */
export function makeRunEngine({
  config,
  store,
  clock,
  log,
  newId,
  egress,
  liveTraces,
  mcp,
  evaluators,
  agentBackoffMs,
  tasks = {},
}: RunEngineOptions): Worker {
  return makeWorker({
    store,
    clock,
    log,
    concurrency: config.workers,
    perKeyCap: config.maxRunsPerProject,
    leaseMs: config.workerLeaseMs,
    tasks: {
      // A waiver's expiry: its decision is decided again when it comes.
      [REFRESH_RELEASE_DECISION]: defineTask(z.object({ decision_id: z.string() }), async ({ decision_id }) => {
        await store.write(["refreshDecision", decision_id, clock.now().toISOString()]);
      }),
      [EXECUTE_RUN]: makeExecuteRun({
        store,
        clock,
        newId,
        egress,
        log,
        judge:
          config.judge &&
          makeLlmJudge({ egress, ...config.judge, ...(agentBackoffMs ? { backoffMs: agentBackoffMs } : {}) }),
        ...(agentBackoffMs ? { agentBackoffMs } : {}),
        liveTraces,
        evaluators,
        maxConversations: config.maxConversations,
        maxConversationsPerProject: config.maxConversationsPerProject,
        mcp,
      }),
      ...tasks,
    },
  });
}
