import { setTimeout as sleep } from "node:timers/promises";
import {
  isTerminalRunStatus,
  type Environment,
  type PlannedRun,
  type Run,
  type RunSource,
  type UploadRunBody,
} from "../../server/contract/index.js";
import { readConfig } from "../../server/config.js";
import type { LocalEndpoint } from "../../server/local/local-environment.js";
import { openLocalRunner, type LocalRunner } from "../../server/local/local-runner.js";
import { uploadContents } from "../../server/local/upload-contents.js";
import { createLogger } from "../../server/log.js";
import { contentAddress } from "../../server/specs/canonical-json.js";
import { loadWasmSqlite } from "../../server/store/wasm-db.js";
import type { AssureClient } from "./assure-client.js";
import type { StartedGate, UploadedSpec } from "./gate.js";

/** How often the runs held in the job are looked at until they end. */
const POLL_MS = 200;

export interface InJobSlot {
  slot: PlannedRun;
  /** The commit's spec file, with its version as read here: what the engine in the job plays. */
  spec: UploadedSpec;
}

export interface InJobOptions {
  /** The agent inside the job, e.g. http://localhost:8080/v1. */
  agentUrl: string;
  /** Headers sent to it (an environment's own header values are sealed in the service: never read back). */
  agentHeaders: Record<string, string>;
  source: RunSource;
  deadline: number;
  log: (line: string) => void;
}

/**
 * The decision's slots this step fills: planned to be executed outside the service and not filled
 * yet (a re-run of the workflow finds them filled), of specs this commit has.
 */
export function inJobSlotsOf({ decision, specs }: Pick<StartedGate, "decision" | "specs">): InJobSlot[] {
  const byId = new Map([...specs.values()].map((spec) => [spec.test_spec_id, spec]));
  return decision.planned.flatMap((slot) => {
    const spec = byId.get(slot.test_spec_id);
    return slot.executor === "local" && slot.run_id === null && spec ? [{ slot, spec }] : [];
  });
}

/**
 * Holds the conversations of each local slot here, in the runner, against the agent inside the job
 * (the service's own engine, on a WebAssembly SQLite in memory), then uploads each run's
 * conversations and trace into its slot. The service checks them against the spec version and
 * judges them itself: nothing this step concludes is sent.
 */
export async function executeInJob(
  client: AssureClient,
  slots: readonly InJobSlot[],
  { agentUrl, agentHeaders, source, deadline, log }: InJobOptions,
): Promise<StartedGate["runs"]> {
  if (slots.length === 0) return [];
  const runner = await openLocalRunner({
    config: readConfig({ ...process.env, ASSURE_DB: undefined }),
    log: createLogger({ level: "warn" }),
    openDb: await loadWasmSqlite(),
  });
  try {
    const uploaded: StartedGate["runs"] = [];
    for (const [environmentId, group] of groupBy(slots, (s) => s.slot.environment_id)) {
      const { body: environment } = await client.get<Environment>(`/v1/environments/${environmentId}`);
      const localEnvironment = await runner.useEndpoint(endpointInJob(environment, agentUrl, agentHeaders));
      const runs = await holdRuns(runner, group, localEnvironment, deadline, log, environment.name);
      for (const [i, { slot, spec }] of group.entries()) {
        const held = runs[i]!;
        const contents = await uploadContents(runner.store, held.run_id);
        if (contents.conversations.length === 0) {
          const why = held.failure ? `${held.failure.cause}: ${held.failure.message}` : held.status;
          throw new Error(
            `${spec.path} in ${environment.name}: no conversation with the agent in this job completed (${why}); nothing to upload.`,
          );
        }
        const body: UploadRunBody = {
          test_spec_id: slot.test_spec_id,
          spec_version: spec.spec_version,
          environment_id: slot.environment_id,
          source,
          ...contents,
        };
        const { body: run } = await client.post<Run>("/v1/runs/uploads", body, {
          "idempotency-key": `upload-${contentAddress(body)}`,
        });
        log(`${run.run_id}: ${spec.path} in ${environment.name} (held in this job, uploaded: the service judges it)`);
        uploaded.push({ run, spec, environmentName: environment.name });
      }
    }
    return uploaded;
  } finally {
    await runner.close();
  }
}

/** The service's environment as the job reaches its agent: its protocol and settings, the job's URL and headers. */
function endpointInJob(environment: Environment, agentUrl: string, headers: Record<string, string>): LocalEndpoint {
  const { endpoint } = environment;
  return {
    protocol: endpoint.protocol,
    base_url: agentUrl,
    ...(endpoint.model ? { model: endpoint.model } : {}),
    readiness_path: endpoint.readiness_path,
    max_concurrency: endpoint.max_concurrency,
    ...(endpoint.rate_limit_per_minute ? { rate_limit_per_minute: endpoint.rate_limit_per_minute } : {}),
    ...(endpoint.trace_wait_ms ? { trace_wait_ms: endpoint.trace_wait_ms } : {}),
    ...(endpoint.request ? { request: endpoint.request } : {}),
    ...(endpoint.response ? { response: endpoint.response } : {}),
    pricing: endpoint.pricing,
    headers,
  } as LocalEndpoint;
}

/** Runs each slot's spec against the job's agent and waits until every run has ended. */
async function holdRuns(
  runner: LocalRunner,
  slots: readonly InJobSlot[],
  environmentId: string,
  deadline: number,
  log: (line: string) => void,
  environmentName: string,
): Promise<Run[]> {
  const stored = [];
  for (const { spec } of slots) stored.push(await runner.addSpec(spec.version));
  const { runs } = await runner.startRuns(stored, environmentId);
  for (;;) {
    const current: Run[] = [];
    for (const run of runs) current.push((await runner.store.getRun(run.run_id))!);
    if (current.every((run) => isTerminalRunStatus(run.status))) {
      current.forEach((run, i) =>
        log(`${slots[i]!.spec.path} in ${environmentName}: held in this job, ${run.status} (${run.verdict} here)`),
      );
      return current;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out holding the conversations in this job (${current.filter((r) => !isTerminalRunStatus(r.status)).length} run(s) still going).`,
      );
    }
    await sleep(POLL_MS);
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
