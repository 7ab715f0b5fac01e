/** The SQLite migration whose schema the baseline below reproduces: a new PostgreSQL database starts there. */
export const POSTGRES_BASELINE_VERSION = 33;

/**
 * The store's schema at migration 33 on PostgreSQL (14 or later), table for table, column for column
 * (same names, same order) with SQLite's. How it translates:
 * - INTEGER is bigint (SQLite's integers are 64-bit: GitHub ids, byte counts, milliseconds); REAL is
 *   double precision; BLOB is bytea; jobs' AUTOINCREMENT key is an identity column.
 * - TEXT is text COLLATE "C": bytewise, as SQLite's BINARY collation compares, so ORDER BY and keyset
 *   pagination agree on both databases. JSON stays text, exactly as written.
 * - The views expand `*` when created (SQLite expands it when read): a migration that adds a column
 *   to webhooks or projects recreates live_webhooks or project_records.
 * - SQLite's RAISE(ABORT) triggers are `refuse_change`, raising the same message; PostgreSQL's
 *   TRUNCATE skips row triggers, so the append-only tables refuse it too.
 */
export const POSTGRES_BASELINE = /* sql */ `
CREATE TABLE settings (
  key text COLLATE "C" PRIMARY KEY,
  value text COLLATE "C" NOT NULL
);

CREATE TABLE projects (
  project_id text COLLATE "C" PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE,
  description text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  public_badge bigint NOT NULL DEFAULT 0 CHECK (public_badge IN (0, 1)),
  oidc text COLLATE "C"
);
CREATE INDEX projects_by_created ON projects (created_at DESC, project_id DESC);

CREATE TABLE api_keys (
  key_id text COLLATE "C" PRIMARY KEY,
  secret_hash bytea NOT NULL,
  project_id text COLLATE "C" REFERENCES projects (project_id),
  scopes text COLLATE "C" NOT NULL,
  name text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  revoked_at text COLLATE "C",
  expires_at text COLLATE "C",
  issued_for text COLLATE "C",
  last_used_at text COLLATE "C"
);

CREATE TABLE agents (
  agent_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  name text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL,
  description text COLLATE "C",
  created_at text COLLATE "C" NOT NULL
);
CREATE INDEX agents_by_project ON agents (project_id, created_at DESC, agent_id DESC);

CREATE TABLE environments (
  environment_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  name text COLLATE "C" NOT NULL,
  agent_id text COLLATE "C" NOT NULL REFERENCES agents (agent_id),
  protocol text COLLATE "C" NOT NULL,
  base_url text COLLATE "C" NOT NULL,
  model text COLLATE "C",
  readiness_path text COLLATE "C" NOT NULL,
  headers text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  header_names text COLLATE "C" NOT NULL DEFAULT '[]',
  url_pattern text COLLATE "C",
  max_concurrency bigint NOT NULL DEFAULT 16,
  rate_limit_per_minute bigint,
  pricing text COLLATE "C" NOT NULL DEFAULT '{}',
  http text COLLATE "C",
  trace_wait_ms bigint,
  UNIQUE (project_id, name)
);
CREATE INDEX environments_by_project ON environments (project_id, created_at DESC, environment_id DESC);

CREATE TABLE test_specs (
  test_spec_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  name text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  UNIQUE (project_id, name)
);
CREATE INDEX test_specs_by_project ON test_specs (project_id, created_at DESC, test_spec_id DESC);

CREATE TABLE test_spec_versions (
  test_spec_id text COLLATE "C" NOT NULL REFERENCES test_specs (test_spec_id),
  version_number bigint NOT NULL,
  spec_version text COLLATE "C" NOT NULL,
  document text COLLATE "C" NOT NULL,
  source_format text COLLATE "C" NOT NULL,
  source_text text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  source_lines text COLLATE "C",
  source_repository text COLLATE "C",
  source_commit_sha text COLLATE "C",
  source_path text COLLATE "C",
  source_files text COLLATE "C",
  PRIMARY KEY (test_spec_id, version_number)
);
CREATE INDEX test_spec_versions_by_content ON test_spec_versions (test_spec_id, spec_version);

CREATE TABLE runs (
  run_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  status text COLLATE "C" NOT NULL,
  verdict text COLLATE "C" NOT NULL,
  failure_cause text COLLATE "C",
  failure_message text COLLATE "C",
  test_spec_id text COLLATE "C" NOT NULL REFERENCES test_specs (test_spec_id),
  spec_version text COLLATE "C" NOT NULL,
  environment_id text COLLATE "C" NOT NULL REFERENCES environments (environment_id),
  agent_id text COLLATE "C" NOT NULL REFERENCES agents (agent_id),
  agent_version text COLLATE "C" NOT NULL,
  source text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  started_at text COLLATE "C",
  ended_at text COLLATE "C",
  source_repository text COLLATE "C",
  source_commit_sha text COLLATE "C",
  agent_url text COLLATE "C",
  agent_usage text COLLATE "C",
  pricing text COLLATE "C",
  started_by text COLLATE "C",
  executor text COLLATE "C" NOT NULL DEFAULT 'service',
  uploaded_by text COLLATE "C"
);
CREATE INDEX runs_by_project ON runs (project_id, created_at DESC, run_id DESC);
CREATE INDEX runs_by_project_status ON runs (project_id, status, created_at DESC, run_id DESC);
CREATE INDEX runs_by_project_environment ON runs (project_id, environment_id, created_at DESC, run_id DESC);
CREATE INDEX runs_by_created ON runs (created_at DESC, run_id DESC);
CREATE INDEX runs_by_source ON runs (project_id, source_repository, source_commit_sha, created_at);

CREATE TABLE idempotency_keys (
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  idempotency_key text COLLATE "C" NOT NULL,
  request_hash text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  created_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (project_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE jobs (
  job_id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  task text COLLATE "C" NOT NULL,
  job_key text COLLATE "C" NOT NULL UNIQUE,
  payload text COLLATE "C" NOT NULL,
  state text COLLATE "C" NOT NULL CHECK (state IN ('queued', 'running')),
  run_at text COLLATE "C" NOT NULL,
  attempts bigint NOT NULL DEFAULT 0,
  max_attempts bigint NOT NULL,
  locked_by text COLLATE "C",
  locked_until text COLLATE "C",
  last_error text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  fair_key text COLLATE "C"
);
CREATE INDEX jobs_ready ON jobs (state, run_at, job_id);
CREATE INDEX jobs_leases ON jobs (state, locked_until);
CREATE INDEX jobs_by_fair_key ON jobs (state, fair_key, run_at, job_id);

CREATE TABLE run_events (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  sequence bigint NOT NULL,
  event_id text COLLATE "C" NOT NULL UNIQUE,
  type text COLLATE "C" NOT NULL,
  occurred_at text COLLATE "C" NOT NULL,
  conversation_id text COLLATE "C",
  turn bigint,
  data text COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, sequence)
);
CREATE INDEX run_events_by_conversation ON run_events (conversation_id, turn, sequence);

CREATE TABLE conversations (
  conversation_id text COLLATE "C" PRIMARY KEY,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  kind text COLLATE "C" NOT NULL CHECK (kind IN ('scenario', 'probe')),
  scenario_id text COLLATE "C" NOT NULL,
  repeat_index bigint NOT NULL,
  attempt bigint NOT NULL,
  status text COLLATE "C" NOT NULL CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
  canary text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  ended_at text COLLATE "C",
  retry bigint NOT NULL DEFAULT 0,
  retry_outcome text COLLATE "C" CHECK (retry_outcome IN ('passed', 'failed'))
);
CREATE INDEX conversations_by_run ON conversations (run_id, conversation_id);
CREATE INDEX conversations_by_case ON conversations (run_id, kind, scenario_id, repeat_index, retry);

CREATE TABLE evaluations (
  evaluation_id text COLLATE "C" PRIMARY KEY,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  metric_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  scenario_id text COLLATE "C",
  conversation_id text COLLATE "C" REFERENCES conversations (conversation_id),
  turn bigint,
  spec_path text COLLATE "C",
  score double precision NOT NULL,
  threshold double precision NOT NULL,
  status text COLLATE "C" NOT NULL,
  judge text COLLATE "C" NOT NULL,
  reason text COLLATE "C" NOT NULL,
  evidence_refs text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL DEFAULT 'metric'
);
CREATE INDEX evaluations_by_run ON evaluations (run_id, created_at, evaluation_id);
CREATE INDEX evaluations_by_conversation ON evaluations (conversation_id);

CREATE TABLE gate_results (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  position bigint NOT NULL,
  gate_id text COLLATE "C" NOT NULL,
  title text COLLATE "C",
  status text COLLATE "C" NOT NULL,
  reason text COLLATE "C" NOT NULL,
  evidence_refs text COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, position)
);

CREATE TABLE findings (
  finding_id text COLLATE "C" PRIMARY KEY,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id),
  probe_id text COLLATE "C" NOT NULL,
  category text COLLATE "C" NOT NULL,
  owasp text COLLATE "C" NOT NULL,
  severity text COLLATE "C" NOT NULL,
  severity_rank bigint NOT NULL,
  title text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  status text COLLATE "C" NOT NULL,
  spec_path text COLLATE "C",
  evidence_refs text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL
);
CREATE INDEX findings_by_run ON findings (run_id, finding_id);

CREATE TABLE project_repositories (
  github_id bigint PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  full_name text COLLATE "C" NOT NULL,
  bound_at text COLLATE "C" NOT NULL
);
CREATE INDEX project_repositories_by_project ON project_repositories (project_id, github_id);

CREATE TABLE release_decisions (
  decision_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  repository text COLLATE "C",
  commit_sha text COLLATE "C",
  attempt bigint NOT NULL,
  status text COLLATE "C" NOT NULL,
  reasons text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  decided_at text COLLATE "C",
  base text COLLATE "C",
  baseline text COLLATE "C",
  history text COLLATE "C",
  changes text COLLATE "C",
  planned_by text COLLATE "C" NOT NULL DEFAULT 'client' CHECK (planned_by IN ('app', 'client')),
  UNIQUE (project_id, repository, commit_sha)
);
CREATE INDEX release_decisions_by_project ON release_decisions (project_id, created_at DESC, decision_id DESC);
CREATE INDEX release_decisions_by_created ON release_decisions (created_at DESC, decision_id DESC);

CREATE TABLE release_decision_slots (
  decision_id text COLLATE "C" NOT NULL REFERENCES release_decisions (decision_id),
  attempt bigint NOT NULL,
  position bigint NOT NULL,
  test_spec_id text COLLATE "C" NOT NULL REFERENCES test_specs (test_spec_id),
  environment_id text COLLATE "C" NOT NULL REFERENCES environments (environment_id),
  run_id text COLLATE "C" REFERENCES runs (run_id),
  waiting_for text COLLATE "C",
  wait_until text COLLATE "C",
  spec_version text COLLATE "C",
  executor text COLLATE "C" NOT NULL DEFAULT 'service',
  PRIMARY KEY (decision_id, attempt, position)
);
CREATE INDEX release_decision_slots_by_run ON release_decision_slots (run_id);

CREATE TABLE release_decision_events (
  decision_id text COLLATE "C" NOT NULL REFERENCES release_decisions (decision_id),
  sequence bigint NOT NULL,
  event_id text COLLATE "C" NOT NULL UNIQUE,
  type text COLLATE "C" NOT NULL,
  occurred_at text COLLATE "C" NOT NULL,
  run_id text COLLATE "C",
  data text COLLATE "C" NOT NULL,
  PRIMARY KEY (decision_id, sequence)
);

CREATE TABLE github_deliveries (
  delivery_id text COLLATE "C" PRIMARY KEY,
  event text COLLATE "C" NOT NULL,
  action text COLLATE "C",
  payload text COLLATE "C" NOT NULL,
  received_at text COLLATE "C" NOT NULL,
  body_sha256 text COLLATE "C"
);
CREATE UNIQUE INDEX github_deliveries_by_body ON github_deliveries (body_sha256) WHERE body_sha256 IS NOT NULL;

CREATE TABLE github_commits (
  repository_id bigint NOT NULL,
  head_sha text COLLATE "C" NOT NULL,
  check_name text COLLATE "C" NOT NULL,
  repository text COLLATE "C" NOT NULL,
  installation_id bigint NOT NULL,
  ref text COLLATE "C",
  pull_request bigint,
  project_id text COLLATE "C" REFERENCES projects (project_id),
  decision_id text COLLATE "C" REFERENCES release_decisions (decision_id),
  problem text COLLATE "C",
  updated_at text COLLATE "C" NOT NULL,
  synced_at text COLLATE "C",
  revision bigint NOT NULL DEFAULT 1,
  synced_revision bigint,
  synced_sequence bigint,
  base_sha text COLLATE "C",
  fork bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (repository_id, head_sha, check_name)
);
CREATE INDEX github_commits_by_decision ON github_commits (decision_id);

CREATE TABLE github_check_runs (
  check_run_id bigint PRIMARY KEY,
  repository_id bigint NOT NULL,
  head_sha text COLLATE "C" NOT NULL,
  check_name text COLLATE "C" NOT NULL,
  status text COLLATE "C" NOT NULL,
  conclusion text COLLATE "C",
  published text COLLATE "C" NOT NULL,
  annotations_sent bigint NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL
);
CREATE INDEX github_check_runs_by_commit ON github_check_runs (repository_id, head_sha, check_name, check_run_id);

CREATE TABLE github_deployments (
  repository_id bigint NOT NULL,
  head_sha text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  deployment_id bigint NOT NULL,
  url text COLLATE "C" NOT NULL,
  received_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (repository_id, head_sha, environment, deployment_id)
);

CREATE TABLE github_approval_presses (
  repository_id bigint NOT NULL,
  head_sha text COLLATE "C" NOT NULL,
  login text COLLATE "C" NOT NULL,
  permission text COLLATE "C" NOT NULL,
  granted bigint NOT NULL,
  pressed_at text COLLATE "C" NOT NULL,
  delivery_id text COLLATE "C" NOT NULL UNIQUE,
  action text COLLATE "C" NOT NULL DEFAULT 'approve',
  refusal text COLLATE "C"
);
CREATE INDEX github_approval_presses_by_commit ON github_approval_presses (repository_id, head_sha, pressed_at);

CREATE TABLE waivers (
  waiver_id text COLLATE "C" PRIMARY KEY,
  decision_id text COLLATE "C" NOT NULL REFERENCES release_decisions (decision_id),
  run_id text COLLATE "C" REFERENCES runs (run_id),
  gate_id text COLLATE "C" NOT NULL,
  reason text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C",
  revokes text COLLATE "C" REFERENCES waivers (waiver_id),
  created_by_key text COLLATE "C",
  created_by_login text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  policy_hash text COLLATE "C"
);
CREATE INDEX waivers_by_decision ON waivers (decision_id, waiver_id);
CREATE UNIQUE INDEX waivers_revoked_once ON waivers (revokes) WHERE revokes IS NOT NULL;

CREATE TABLE webhooks (
  webhook_id text COLLATE "C" PRIMARY KEY,
  project_id text COLLATE "C" NOT NULL REFERENCES projects (project_id),
  url text COLLATE "C" NOT NULL,
  event_types text COLLATE "C",
  description text COLLATE "C",
  enabled bigint NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  disabled_reason text COLLATE "C",
  secret text COLLATE "C" NOT NULL,
  previous_secret text COLLATE "C",
  previous_secret_until text COLLATE "C",
  failing_since text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  deleted_at text COLLATE "C",
  consecutive_failures bigint NOT NULL DEFAULT 0,
  paused_until text COLLATE "C",
  last_claimed_at text COLLATE "C"
);
CREATE INDEX webhooks_by_project ON webhooks (project_id, webhook_id);

CREATE TABLE webhook_deliveries (
  delivery_id text COLLATE "C" PRIMARY KEY,
  webhook_id text COLLATE "C" NOT NULL REFERENCES webhooks (webhook_id),
  event_id text COLLATE "C" NOT NULL,
  event_source text COLLATE "C" NOT NULL CHECK (event_source IN ('run', 'decision')),
  event_type text COLLATE "C" NOT NULL,
  status text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts bigint NOT NULL DEFAULT 0,
  next_attempt_at text COLLATE "C",
  lease_until text COLLATE "C",
  created_at text COLLATE "C" NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, delivery_id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (webhook_id, event_id);

CREATE TABLE webhook_attempts (
  delivery_id text COLLATE "C" NOT NULL REFERENCES webhook_deliveries (delivery_id),
  attempt bigint NOT NULL,
  webhook_id text COLLATE "C" NOT NULL,
  attempted_at text COLLATE "C" NOT NULL,
  response_status bigint,
  duration_ms double precision NOT NULL,
  error text COLLATE "C",
  next_attempt_at text COLLATE "C",
  PRIMARY KEY (delivery_id, attempt)
);
CREATE INDEX webhook_attempts_by_webhook ON webhook_attempts (webhook_id, attempted_at);

CREATE TABLE audit_events (
  audit_event_id text COLLATE "C" PRIMARY KEY,
  created_at text COLLATE "C" NOT NULL,
  actor_type text COLLATE "C" NOT NULL CHECK (actor_type IN ('api_key', 'cli', 'github_oidc')),
  actor_key_id text COLLATE "C",
  actor_label text COLLATE "C",
  action text COLLATE "C" NOT NULL,
  resource_id text COLLATE "C",
  project_id text COLLATE "C",
  request_id text COLLATE "C",
  client_address text COLLATE "C"
);
CREATE INDEX audit_events_by_time ON audit_events (created_at DESC, audit_event_id DESC);
CREATE INDEX audit_events_by_project ON audit_events (project_id, created_at DESC, audit_event_id DESC);

CREATE TABLE oidc_token_uses (
  jti text COLLATE "C" PRIMARY KEY,
  expires_at text COLLATE "C" NOT NULL
);
CREATE INDEX oidc_token_uses_by_expiry ON oidc_token_uses (expires_at);

CREATE VIEW live_webhooks AS SELECT * FROM webhooks WHERE deleted_at IS NULL;

-- A project with its repositories as a JSON array of {github_id, full_name} in github_id order, '[]'
-- for none: the keys in SQLite's order (json, not jsonb, keeps it); only the whitespace differs.
CREATE VIEW project_records AS
  SELECT p.*,
         COALESCE((SELECT json_agg(json_build_object('github_id', r.github_id, 'full_name', r.full_name)
                                   ORDER BY r.github_id)
                   FROM project_repositories r
                   WHERE r.project_id = p.project_id)::text, '[]') COLLATE "C" AS repositories
  FROM projects p;

-- SQLite's RAISE(ABORT, message): the trigger's one argument is the message.
CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER audit_events_are_not_changed BEFORE UPDATE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION refuse_change('audit events are append-only');
CREATE TRIGGER audit_events_are_not_deleted BEFORE DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION refuse_change('audit events are append-only');
CREATE TRIGGER audit_events_are_not_truncated BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('audit events are append-only');
`;
