import type { Principal } from "../auth/authenticate.js";
import type { Run, UploadRunBody } from "../contract/index.js";
import { AGENT_PROTOCOLS } from "../engine/agents/index.js";
import { executeRunJob } from "../engine/tasks/execute-run.js";
import { ApiError } from "../errors.js";
import { spend } from "../limits/limits.js";
import { contentAddress } from "../specs/canonical-json.js";
import { checkUpload } from "./check-upload.js";
import { refuseAppRunKey, resolveRunTarget } from "./run-target.js";
import type { CreateRunDeps } from "./create-run.js";

export type UploadRunDeps = Pick<
  CreateRunDeps,
  "store" | "clock" | "newId" | "idempotencyWindowMs" | "nudgeEngine" | "limits"
>;

/**
 * Stores a run held outside the service (`executor: local`, `uploaded_by` its key), once per
 * idempotency key as `createRun` does, after checking it against the spec version it names: its
 * conversations and trace, never a verdict. It is stored EVALUATING, and the engine judges it
 * with the service's own evaluators and judge, as any run it held. A refused upload stores nothing.
 */
export async function uploadRun(
  { store, clock, newId, idempotencyWindowMs, nudgeEngine, limits }: UploadRunDeps,
  principal: Principal,
  body: UploadRunBody,
  idempotencyKey: string,
): Promise<{ run: Run; replayed: boolean }> {
  refuseAppRunKey(idempotencyKey);
  const { spec: head, environment, agent } = await resolveRunTarget(store, principal, body);
  const request = () => {
    const now = clock.now();
    return {
      project_id: head.project_id,
      idempotency_key: idempotencyKey,
      request_hash: contentAddress(body),
      now: now.toISOString(),
      expires_at: new Date(now.getTime() + idempotencyWindowMs).toISOString(),
    };
  };
  const earlier = await store.lookUpIdempotencyKey(request());
  if (earlier.kind === "replay") return { run: earlier.run, replayed: true };
  if (earlier.kind === "key_reused") throw keyReused();

  // Spent before the check: a refused upload costs its sender as much as an accepted one, so checks cannot be had for free.
  await spend(limits.runCreates, `project:${head.project_id}`, "runs created in this project", Date.now());
  const spec = (await store.getSpecDocument(head.test_spec_id, head.spec_version))!;
  const checked = checkUpload(spec, body, {
    toolsRunBy: AGENT_PROTOCOLS[environment.protocol].toolsRunBy,
    newId: (kind) => newId(kind),
    now: clock.now(),
  });

  const now = clock.now().toISOString();
  const runId = newId("run");
  const [outcome] = await store.write([
    "createUploadedRun",
    request(),
    {
      run_id: runId,
      project_id: head.project_id,
      status: "EVALUATING",
      verdict: "PENDING",
      failure_cause: null,
      failure_message: null,
      test_spec_id: head.test_spec_id,
      spec_version: head.spec_version,
      environment_id: environment.environment_id,
      agent_id: agent.agent_id,
      agent_version: agent.version,
      agent_url: null,
      source: body.source ?? null,
      started_by: principal.key_id,
      executor: "local",
      uploaded_by: principal.key_id,
      created_at: now,
      updated_at: now,
      started_at: checked.conversations[0]?.created_at ?? now,
      ended_at: null,
    },
    executeRunJob(runId, head.project_id, now),
    checked.conversations.map((conversation) => ({ ...conversation, run_id: runId })),
    checked.events,
    limits.maxQueuedRuns,
  ]);
  if (outcome.kind === "created") {
    nudgeEngine();
    return { run: outcome.run, replayed: false };
  }
  if (outcome.kind === "replay") return { run: outcome.run, replayed: true };
  if (outcome.kind === "key_reused") throw keyReused();
  throw new ApiError("RUN_QUOTA_EXCEEDED", {
    message: `The project has ${outcome.kind === "quota_exceeded" ? outcome.active : "too many"} runs queued, running or being judged, its most (ASSURE_MAX_QUEUED_RUNS); retry when some have ended.`,
    headers: { "retry-after": "30" },
  });
}

const keyReused = () =>
  new ApiError("IDEMPOTENCY_KEY_REUSED", {
    message: "This Idempotency-Key was already used with a different request body; use a new key.",
  });
