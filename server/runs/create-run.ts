import type { Principal } from "../auth/authenticate.js";
import type { Clock } from "../clock.js";
import { APP_RUN_KEY_PREFIX, DERIVED_RUN_KEY_PREFIX, type CreateRunBody, type Run } from "../contract/index.js";
import { GITHUB_APP_KEY_ID } from "../auth/github-app-principal.js";
import { executeRunJob } from "../engine/tasks/execute-run.js";
import { ApiError } from "../errors.js";
import type { NewId } from "../ids.js";
import type { EgressPolicy } from "../net/egress.js";
import type { CheckReadiness } from "../net/readiness.js";
import { contentAddress } from "../specs/canonical-json.js";
import type { ServiceStore } from "../store/service-store.js";
import { resolveRunAgent } from "./agent-url.js";
import { refuseAppRunKey, resolveRunTarget } from "./run-target.js";
import { spend, type Limits } from "../limits/limits.js";

const NEVER = "9999-12-31T23:59:59.999Z";

/** When a caller refused by the queued-runs quota should look again: about a short run's length. */
const QUOTA_RETRY_AFTER_SECONDS = 30;

/** Printable ASCII, 1–255 characters: what fits in a header and in a log line without surprises. */
/** What an Idempotency-Key may be: 1–255 printable ASCII characters, no spaces. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface CreateRunDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  checkReadiness: CheckReadiness;
  egress: Pick<EgressPolicy, "checkHost">;
  idempotencyWindowMs: number;
  /** Tells the run engine that work was enqueued, so it starts at once instead of at its next poll. */
  nudgeEngine: () => void;
  /** Run creations per project a minute, and runs QUEUED or RUNNING at once per project. */
  limits: Pick<Limits, "runCreates" | "maxQueuedRuns">;
}

export function assertIdempotencyKey(key: string | string[] | undefined): string {
  if (key === undefined || key === "") {
    throw new ApiError("IDEMPOTENCY_KEY_REQUIRED", {
      message: "Send an Idempotency-Key header (1–255 printable characters), e.g. the commit SHA and spec name.",
    });
  }
  if (Array.isArray(key) || !IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError("VALIDATION_FAILED", {
      message: "The Idempotency-Key header is invalid.",
      details: [
        { path: "headers.idempotency-key", message: "one value of 1–255 printable ASCII characters, no spaces" },
      ],
    });
  }
  return key;
}

/**
 * Starts a run, exactly once per idempotency key and project within the window. A replay
 * returns the run the key created; a request that is refused (not found, not ready) leaves the
 * key unused.
 */
export async function createRun(
  { store, clock, newId, checkReadiness, egress, idempotencyWindowMs, nudgeEngine, limits }: CreateRunDeps,
  principal: Principal,
  body: CreateRunBody,
  idempotencyKey: string,
): Promise<{ run: Run; replayed: boolean }> {
  if (principal.key_id !== GITHUB_APP_KEY_ID) refuseAppRunKey(idempotencyKey);
  const { spec, environment, agent } = await resolveRunTarget(store, principal, body);

  const request = () => {
    const now = clock.now();
    return {
      project_id: spec.project_id,
      idempotency_key: idempotencyKey,
      request_hash: contentAddress(body),
      now: now.toISOString(),
      // A key derived from a commit stands for that commit's run for good: it never expires.
      expires_at:
        idempotencyKey.startsWith(DERIVED_RUN_KEY_PREFIX) || idempotencyKey.startsWith(APP_RUN_KEY_PREFIX)
          ? NEVER
          : new Date(now.getTime() + idempotencyWindowMs).toISOString(),
    };
  };
  const answer = (outcome: Awaited<ReturnType<typeof store.lookUpIdempotencyKey>>) => {
    if (outcome.kind === "replay") return { run: outcome.run, replayed: true };
    if (outcome.kind === "key_reused") {
      throw new ApiError("IDEMPOTENCY_KEY_REUSED", {
        message: "This Idempotency-Key was already used with a different request body; use a new key.",
      });
    }
    return undefined;
  };

  // A replay is never refused by a limit: it creates nothing.
  const earlier = answer(await store.lookUpIdempotencyKey(request()));
  if (earlier) return earlier;
  await spend(limits.runCreates, `project:${spec.project_id}`, "runs created in this project", Date.now());

  const agentAt = resolveRunAgent(environment, body.source, body.agent_url, egress);
  const readiness = await checkReadiness({
    ...(await store.getEnvironmentTarget(environment.environment_id))!,
    base_url: agentAt.url,
  });
  if (!readiness.ready) {
    throw new ApiError("ENVIRONMENT_NOT_READY", {
      message: `The agent entrypoint of environment '${environment.name}' is unavailable: ${readiness.reason}`,
      headers: { "retry-after": "5" },
    });
  }

  const now = clock.now().toISOString();
  const runId = newId("run");
  const [outcome] = await store.write([
    "createRunIdempotently",
    request(),
    {
      run_id: runId,
      project_id: spec.project_id,
      status: "QUEUED",
      verdict: "PENDING",
      failure_cause: null,
      failure_message: null,
      test_spec_id: spec.test_spec_id,
      spec_version: spec.spec_version,
      environment_id: environment.environment_id,
      agent_id: agent.agent_id,
      agent_version: agentAt.perCommit && body.source ? body.source.commit_sha : agent.version,
      agent_url: agentAt.url,
      source: body.source ?? null,
      started_by: principal.key_id,
      executor: "service",
      uploaded_by: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      ended_at: null,
    },
    executeRunJob(runId, spec.project_id, now),
    limits.maxQueuedRuns,
  ]);
  if (outcome.kind === "created") {
    nudgeEngine();
    return { run: outcome.run, replayed: false };
  }
  if (outcome.kind === "quota_exceeded") {
    throw new ApiError("RUN_QUOTA_EXCEEDED", {
      message: `The project has ${outcome.active} runs queued or running, its most (ASSURE_MAX_QUEUED_RUNS); retry when some have ended.`,
      headers: { "retry-after": String(QUOTA_RETRY_AFTER_SECONDS) },
    });
  }
  return answer(outcome)!;
}
