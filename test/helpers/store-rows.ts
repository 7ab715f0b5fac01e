import type { Store } from "../../server/store/index.js";

/**
 * Writes a queued run `run_1` straight into a store, with what it stands on: project `prj_1`,
 * agent `agt_1`, environment `env_1`, test spec `tsp_1`, and its job. For tests of the store and
 * the engine below the API.
 */
export async function insertQueuedRun(store: Store, at: string): Promise<void> {
  await store.createProject({ project_id: "prj_1", name: "p", description: null, created_at: at });
  await store.createAgent({
    agent_id: "agt_1",
    project_id: "prj_1",
    name: "a",
    version: "1",
    description: null,
    created_at: at,
  });
  await store.createEnvironment({
    environment_id: "env_1",
    project_id: "prj_1",
    name: "e",
    agent_id: "agt_1",
    protocol: "openai-chat",
    base_url: "http://127.0.0.1:1/v1",
    url_pattern: null,
    model: null,
    readiness_path: "/models",
    max_concurrency: 16,
    rate_limit_per_minute: null,
    headers: {},
    pricing: {},
    http: null,
    created_at: at,
  });
  await store.addTestSpecVersion(
    {
      project_id: "prj_1",
      name: "s",
      spec_version: "sha256:x",
      document: "{}",
      source_format: "json",
      source_text: "{}",
      source_lines: null,
      source: null,
    },
    "tsp_1",
    at,
  );
  await store.createRunIdempotently(
    { project_id: "prj_1", idempotency_key: "k", request_hash: "h", now: at, expires_at: at },
    {
      run_id: "run_1",
      project_id: "prj_1",
      status: "QUEUED",
      verdict: "PENDING",
      failure_cause: null,
      failure_message: null,
      test_spec_id: "tsp_1",
      spec_version: "sha256:x",
      environment_id: "env_1",
      agent_id: "agt_1",
      agent_version: "1",
      agent_url: null,
      source: null,
      started_by: "key_1",
      executor: "service",
      uploaded_by: null,
      created_at: at,
      updated_at: at,
      started_at: null,
      ended_at: null,
    },
    { task: "execute_run", job_key: "execute_run:run_1", payload: { run_id: "run_1" }, run_at: at, max_attempts: 5 },
  );
}
