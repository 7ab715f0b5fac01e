export default /* sql */ `
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE projects (
  project_id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX projects_by_created ON projects (created_at DESC, project_id DESC);

CREATE TABLE api_keys (
  key_id TEXT PRIMARY KEY,
  secret_hash BLOB NOT NULL,
  project_id TEXT REFERENCES projects (project_id),
  scopes TEXT NOT NULL,
  name TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;

CREATE TABLE agents (
  agent_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  description TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX agents_by_project ON agents (project_id, created_at DESC, agent_id DESC);

CREATE TABLE environments (
  environment_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  name TEXT NOT NULL,
  agent_id TEXT NOT NULL REFERENCES agents (agent_id),
  protocol TEXT NOT NULL,
  base_url TEXT NOT NULL,
  model TEXT,
  readiness_path TEXT NOT NULL,
  headers TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;
CREATE INDEX environments_by_project ON environments (project_id, created_at DESC, environment_id DESC);

CREATE TABLE test_specs (
  test_spec_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;
CREATE INDEX test_specs_by_project ON test_specs (project_id, created_at DESC, test_spec_id DESC);

CREATE TABLE test_spec_versions (
  test_spec_id TEXT NOT NULL REFERENCES test_specs (test_spec_id),
  version_number INTEGER NOT NULL,
  spec_version TEXT NOT NULL,
  document TEXT NOT NULL,
  source_format TEXT NOT NULL,
  source_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (test_spec_id, version_number)
) STRICT;
CREATE INDEX test_spec_versions_by_content ON test_spec_versions (test_spec_id, spec_version);

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  status TEXT NOT NULL,
  verdict TEXT NOT NULL,
  failure_cause TEXT,
  failure_message TEXT,
  test_spec_id TEXT NOT NULL REFERENCES test_specs (test_spec_id),
  spec_version TEXT NOT NULL,
  environment_id TEXT NOT NULL REFERENCES environments (environment_id),
  agent_id TEXT NOT NULL REFERENCES agents (agent_id),
  agent_version TEXT NOT NULL,
  source TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT
) STRICT;
CREATE INDEX runs_by_project ON runs (project_id, created_at DESC, run_id DESC);
CREATE INDEX runs_by_project_status ON runs (project_id, status, created_at DESC, run_id DESC);
CREATE INDEX runs_by_project_environment ON runs (project_id, environment_id, created_at DESC, run_id DESC);
CREATE INDEX runs_by_created ON runs (created_at DESC, run_id DESC);

CREATE TABLE idempotency_keys (
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (project_id, idempotency_key)
) STRICT;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
`;
