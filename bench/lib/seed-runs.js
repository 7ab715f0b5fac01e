// Bulk-inserts runs straight into the service's SQLite file (WAL lets the running service keep
// reading). Rows look like the service's own: ULID-style ids, distinct timestamps over weeks.
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case, as server/ids.ts
const DAY_MS = 86_400_000;
const SPREAD_MS = 90 * DAY_MS;

/** `run_` + 10 characters of millisecond time + 16 random characters, the shape server/ids.ts makes. */
export function makeRunId(timeMs) {
  let timePart = "";
  for (let t = timeMs, i = 0; i < 10; i++, t = Math.floor(t / 32)) timePart = ALPHABET[t % 32] + timePart;
  const randomPart = [...randomBytes(16)].map((byte) => ALPHABET[byte & 31]).join("");
  return `run_${timePart}${randomPart}`;
}

/**
 * Finished runs, as a history of weeks is: mostly passed, some failed verdicts, inconclusive
 * results and runs that could not reach the agent. None is left QUEUED or RUNNING, so that a run
 * engine in the service has nothing to pick up while it is being measured.
 */
function outcome(index) {
  const roll = index % 20;
  if (roll < 15) return { status: "COMPLETED", verdict: index % 7 === 0 ? "FAIL" : "PASS", failure: null };
  if (roll < 18) return { status: "INCONCLUSIVE", verdict: "INCONCLUSIVE", failure: null };
  return {
    status: "FAILED",
    verdict: "ERROR",
    failure: { cause: "target_unreachable", message: "GET /models failed: connect ECONNREFUSED" },
  };
}

function source(index) {
  if (index % 3 === 0) return null;
  const sha = randomBytes(20).toString("hex");
  const pullRequest = 1 + (index % 500);
  return JSON.stringify({
    repository: "acme/refund-agent",
    commit_sha: sha,
    ref: `refs/pull/${pullRequest}/head`,
    pull_request: pullRequest,
  });
}

function runRow(index, createdMs, fixture) {
  const { status, verdict, failure } = outcome(index);
  const created = new Date(createdMs).toISOString();
  const started = new Date(createdMs + 1_500).toISOString();
  const ended = new Date(createdMs + (status === "FAILED" ? 3_500 : 95_000)).toISOString();
  return {
    run_id: makeRunId(createdMs),
    project_id: fixture.projectId,
    status,
    verdict,
    failure_cause: failure?.cause ?? null,
    failure_message: failure?.message ?? null,
    test_spec_id: fixture.testSpecId,
    spec_version: fixture.specVersion,
    environment_id: fixture.environmentId,
    agent_id: fixture.agentId,
    agent_version: fixture.agentVersion,
    source: source(index),
    created_at: created,
    updated_at: ended,
    started_at: started,
    ended_at: ended,
  };
}

/**
 * Inserts `count` runs in one transaction, created over the 90 days before `endMs`, each at a
 * distinct millisecond. Returns how long it took.
 */
export function seedRuns(dbPath, fixture, { count, endMs }) {
  const started = performance.now();
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 10000");
    const insert = db.prepare(`INSERT INTO runs (run_id, project_id, status, verdict, failure_cause, failure_message,
        test_spec_id, spec_version, environment_id, agent_id, agent_version, source, created_at, updated_at, started_at, ended_at)
      VALUES (@run_id, @project_id, @status, @verdict, @failure_cause, @failure_message, @test_spec_id, @spec_version,
        @environment_id, @agent_id, @agent_version, @source, @created_at, @updated_at, @started_at, @ended_at)`);
    const stepMs = Math.floor(SPREAD_MS / count);
    const firstMs = endMs - SPREAD_MS;
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        // Jitter inside each step keeps timestamps distinct and increasing but irregular.
        const createdMs = firstMs + i * stepMs + Math.floor(Math.random() * (stepMs - 1));
        insert.run(runRow(i, createdMs, fixture));
      }
    })();
    // Move the new pages from the WAL into the database file so the service reads them from there.
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return performance.now() - started;
}
