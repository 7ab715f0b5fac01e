import { runLinks, type Pricing, type Run, type RunSource, type RunStatus } from "../contract/index.js";
import type { AgentUsage } from "../usage/agent-usage.js";
import { makeKeyLocks } from "./sql/key-locks.js";
import type { Sql } from "./sql/sql.js";
import type { Dialect } from "./sql/dialect.js";
import type { JobsStore, NewJob } from "./jobs.js";
import type { Filter, ListPage, PageRequest, RowPage } from "./pagination.js";

const ANSWERS = "FROM run_events WHERE run_id = @run_id AND type = 'message.received'";

/** The sums over a run's answers, as fields of a JSON object. */
const sumsOf = (d: Dialect) => ({
  answers: "COUNT(*)",
  answers_without_usage: `COALESCE(SUM(CASE WHEN ${d.jsonNumber("data", "$.usage.total_tokens")} IS NULL THEN 1 ELSE 0 END), 0)`,
  input_tokens: `COALESCE(SUM(${d.jsonNumber("data", "$.usage.input_tokens")}), 0)`,
  output_tokens: `COALESCE(SUM(${d.jsonNumber("data", "$.usage.output_tokens")}), 0)`,
  total_tokens: `COALESCE(SUM(${d.jsonNumber("data", "$.usage.total_tokens")}), 0)`,
});

/** JSON of AgentUsage, summed from every answer the run's events hold (the 95th percentile by nearest rank). */
function usageOfRun(d: Dialect): string {
  const latency = d.jsonNumber("data", "$.latency_ms");
  const withoutSplit = `${d.jsonNumber("data", "$.usage.input_tokens")} IS NULL OR ${d.jsonNumber("data", "$.usage.output_tokens")} IS NULL`;
  const byModel = d.jsonObject({
    ...sumsOf(d),
    answers_without_split: `COALESCE(SUM(CASE WHEN ${withoutSplit} THEN 1 ELSE 0 END), 0)`,
  });
  // ceil(n × 0.95) - 1, and 0 for no answers (the answer at that rank is then none: null).
  const rank = "CASE WHEN COUNT(*) > 0 THEN CAST(ceil(COUNT(*) * 0.95) AS INTEGER) - 1 ELSE 0 END";
  return `(SELECT ${d.jsonObject({
    ...sumsOf(d),
    by_model:
      d.json(`(SELECT ${d.jsonObjectAgg("model", d.json("usage"))} FROM (SELECT COALESCE(${d.jsonText("data", "$.model")}, '') AS model, ${byModel} AS usage
      ${ANSWERS} GROUP BY 1) AS models)`),
    latency_ms_p95: `(SELECT ${latency} ${ANSWERS} ORDER BY ${latency} NULLS FIRST
      LIMIT 1 OFFSET (SELECT ${rank} ${ANSWERS}))`,
  })}
  ${ANSWERS})`;
}

export interface RunRow {
  run_id: string;
  project_id: string;
  status: Run["status"];
  verdict: Run["verdict"];
  failure_cause: NonNullable<Run["failure"]>["cause"] | null;
  failure_message: string | null;
  test_spec_id: string;
  spec_version: string;
  environment_id: string;
  agent_id: string;
  agent_version: string;
  /** The agent's base URL the run calls; null for runs made before it was recorded (they used the environment's). */
  agent_url: string | null;
  /** JSON of RunSource, or null. */
  source: string | null;
  /** The key that started it (`github-app` for the App); null for runs made before it was recorded. */
  started_by: string | null;
  executor: Run["executor"];
  /** The key that uploaded a run executed outside the service. */
  uploaded_by: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** Read back, never given: JSON of AgentUsage once the run ended. */
  agent_usage?: string | null;
  /** Read back, never given: JSON of the Pricing the run started with (set from its environment). */
  pricing?: string | null;
}

/** A run to create: its source given as it is, encoded by the store. */
export type NewRun = Omit<RunRow, "source" | "agent_usage" | "pricing"> & { source: RunSource | null };

export function toRun(row: RunRow): Run {
  return {
    run_id: row.run_id,
    project_id: row.project_id,
    status: row.status,
    verdict: row.verdict,
    failure: row.failure_cause ? { cause: row.failure_cause, message: row.failure_message ?? "" } : null,
    test_spec_id: row.test_spec_id,
    spec_version: row.spec_version,
    environment_id: row.environment_id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    agent_url: row.agent_url,
    source: row.source ? (JSON.parse(row.source) as RunSource) : null,
    started_by: row.started_by,
    executor: row.executor,
    uploaded_by: row.uploaded_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    ended_at: row.ended_at,
    links: runLinks(row.run_id),
  };
}

export interface IdempotentRequest {
  project_id: string;
  idempotency_key: string;
  /** Fingerprint of the request body: the same key with another body is refused. */
  request_hash: string;
  now: string;
  expires_at: string;
}

export type IdempotentOutcome = { kind: "none" } | { kind: "replay"; run: Run } | { kind: "key_reused" };

export interface RunStatusChange {
  run_id: string;
  from: RunStatus;
  to: RunStatus;
  terminal: boolean;
  verdict: Run["verdict"];
  failure: Run["failure"];
  now: string;
}

export interface RunFilter {
  project_id?: string | undefined;
  status?: RunStatus | undefined;
  environment_id?: string | undefined;
}

export function makeRunsStore(
  db: Sql,
  listPage: ListPage,
  jobs: Pick<JobsStore["writes"], "enqueueJob">,
  /** Told of each run created, in its transaction (a release decision may be waiting for it). */
  onCreated: (run: Run, now: string) => Promise<void> = () => Promise.resolve(),
) {
  const d = db.dialect;
  const locks = makeKeyLocks(db);
  const USAGE_OF_RUN = usageOfRun(d);
  const insertRun = db.prepare(`INSERT INTO runs (run_id, project_id, status, verdict, failure_cause, failure_message,
      test_spec_id, spec_version, environment_id, agent_id, agent_version, agent_url, source, source_repository, source_commit_sha,
      started_by, executor, uploaded_by, created_at, updated_at, started_at, ended_at, pricing)
    VALUES (@run_id, @project_id, @status, @verdict, @failure_cause, @failure_message, @test_spec_id, @spec_version,
      @environment_id, @agent_id, @agent_version, @agent_url, @source, ${d.jsonText("CAST(@source AS TEXT)", "$.repository")}, ${d.jsonText("CAST(@source AS TEXT)", "$.commit_sha")},
      @started_by, @executor, @uploaded_by, @created_at, @updated_at, @started_at, @ended_at, (SELECT pricing FROM environments WHERE environment_id = @environment_id))`);
  const runById = db.prepare("SELECT * FROM runs WHERE run_id = ?");
  const keyByProject = db.prepare(
    "SELECT request_hash, run_id, expires_at FROM idempotency_keys WHERE project_id = ? AND idempotency_key = ?",
  );
  const deleteKey = db.prepare("DELETE FROM idempotency_keys WHERE project_id = ? AND idempotency_key = ?");
  const sweepExpiredKeys = db.prepare(`DELETE FROM idempotency_keys WHERE (project_id, idempotency_key) IN
    (SELECT project_id, idempotency_key FROM idempotency_keys WHERE expires_at <= ? LIMIT 100)`);
  const insertKey = db.prepare(`INSERT INTO idempotency_keys
      (project_id, idempotency_key, request_hash, run_id, created_at, expires_at)
    VALUES (@project_id, @idempotency_key, @request_hash, @run_id, @now, @expires_at)`);

  async function lookUpKey(request: IdempotentRequest): Promise<IdempotentOutcome> {
    const key = await keyByProject.get<{ request_hash: string; run_id: string; expires_at: string }>(
      request.project_id,
      request.idempotency_key,
    );
    if (!key || key.expires_at <= request.now) return { kind: "none" };
    if (key.request_hash !== request.request_hash) return { kind: "key_reused" };
    return { kind: "replay", run: toRun((await runById.get<RunRow>(key.run_id))!) };
  }

  const countActive = db
    .prepare("SELECT COUNT(*) FROM runs WHERE project_id = ? AND status IN ('QUEUED', 'RUNNING', 'EVALUATING')")
    .pluck();
  /**
   * Creates the run, records its idempotency key and enqueues `job` in one transaction, unless a
   * live key already answers the request. Concurrent identical requests therefore create one run:
   * on PostgreSQL, where nodes create at once, they take turns on the key (and on the project,
   * under a quota) before reading, so the later ones read what the first wrote.
   */
  const createRunIdempotently = (
    request: IdempotentRequest,
    newRun: NewRun,
    job: NewJob,
    maxQueued = Number.POSITIVE_INFINITY,
  ): Promise<IdempotentOutcome | { kind: "created"; run: Run } | { kind: "quota_exceeded"; active: number }> =>
    db.transaction(async () => {
      await locks.lock("idempotency key", `${request.project_id}/${request.idempotency_key}`);
      const existing = await lookUpKey(request);
      if (existing.kind !== "none") return existing;
      const row: RunRow = { ...newRun, source: newRun.source ? JSON.stringify(newRun.source) : null };
      // Counted in the transaction that inserts, the project's creations taking turns: concurrent
      // creations cannot overshoot the quota.
      let active = 0;
      if (Number.isFinite(maxQueued)) {
        await locks.lock("project quota", row.project_id);
        active = (await countActive.get<number>(row.project_id))!;
      }
      if (active >= maxQueued) return { kind: "quota_exceeded", active };
      await sweepExpiredKeys.run(request.now);
      await deleteKey.run(request.project_id, request.idempotency_key);
      await insertRun.run(row);
      await insertKey.run({ ...request, run_id: row.run_id });
      await jobs.enqueueJob(job);
      const run = toRun(row);
      await onCreated(run, request.now);
      return { kind: "created", run };
    });
  const agentUsageOf = db.prepare("SELECT agent_usage FROM runs WHERE run_id = ?").pluck();
  const usageSoFar = db.prepare(`SELECT ${USAGE_OF_RUN}`).pluck();
  const pricingOf = db.prepare("SELECT pricing FROM runs WHERE run_id = ?").pluck();
  const updateStatus = db.prepare(`UPDATE runs SET status = @to, verdict = @verdict, failure_cause = @failure_cause,
      failure_message = @failure_message, updated_at = @now,
      started_at = COALESCE(started_at, CASE WHEN @to = 'RUNNING' THEN @now END),
      ended_at = CASE WHEN @terminal = 1 THEN @now ELSE ended_at END,
      agent_usage = CASE WHEN @terminal = 1 THEN ${USAGE_OF_RUN} ELSE agent_usage END
    WHERE run_id = @run_id AND status = @from
    RETURNING *`);

  return {
    reads: {
      lookUpIdempotencyKey: lookUpKey,
      async getRun(runId: string): Promise<Run | undefined> {
        const row = await runById.get<RunRow>(runId);
        return row && toRun(row);
      },
      /** What the agent's answers reported of their tokens over the run; null until it ended. */
      async getRunAgentUsage(runId: string): Promise<AgentUsage | null> {
        const usage = await agentUsageOf.get<string | null>(runId);
        return usage ? (JSON.parse(usage) as AgentUsage) : null;
      },
      /** What the agent's answers have reported so far (a run in progress: the budget resumes from it). */
      async measureAgentUsage(runId: string): Promise<AgentUsage> {
        return JSON.parse((await usageSoFar.get<string>({ run_id: runId }))!) as AgentUsage;
      },
      /** The prices the run started with (its environment's then); {} for a run from before prices were kept. */
      async getRunPricing(runId: string): Promise<Pricing> {
        return JSON.parse((await pricingOf.get<string | null>(runId)) ?? "{}") as Pricing;
      },
      async listRuns(filter: RunFilter, page: PageRequest): Promise<RowPage<Run>> {
        const filters: Filter[] = [];
        if (filter.project_id) filters.push(["project_id = ?", filter.project_id]);
        if (filter.status) filters.push(["status = ?", filter.status]);
        if (filter.environment_id) filters.push(["environment_id = ?", filter.environment_id]);
        const { rows, next } = await listPage<RunRow>("runs", "run_id", filters, page);
        return { rows: rows.map(toRun), next };
      },
    },
    writes: {
      /**
       * Moves a run from one status to the next, only if it is still in `from` (so two workers
       * can never both move it). Returns the moved run, or undefined if it was not in `from`.
       */
      async updateRunStatus(change: RunStatusChange): Promise<Run | undefined> {
        const row = await updateStatus.get<RunRow>({
          ...change,
          terminal: change.terminal ? 1 : 0,
          failure_cause: change.failure?.cause ?? null,
          failure_message: change.failure?.message ?? null,
        });
        return row && toRun(row);
      },
      createRunIdempotently,
    },
  };
}
