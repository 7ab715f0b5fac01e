export default /* sql */ `
CREATE TABLE jobs (
  job_id INTEGER PRIMARY KEY AUTOINCREMENT,
  task TEXT NOT NULL,
  job_key TEXT NOT NULL UNIQUE,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running')),
  run_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  locked_by TEXT,
  locked_until TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX jobs_ready ON jobs (state, run_at, job_id);
CREATE INDEX jobs_leases ON jobs (state, locked_until);

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  conversation_id TEXT,
  turn INTEGER,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, sequence)
) STRICT;
CREATE INDEX run_events_by_conversation ON run_events (conversation_id, turn, sequence);

CREATE TABLE conversations (
  conversation_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  kind TEXT NOT NULL CHECK (kind IN ('scenario', 'probe')),
  scenario_id TEXT NOT NULL,
  repeat_index INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
  canary TEXT,
  created_at TEXT NOT NULL,
  ended_at TEXT
) STRICT;
CREATE INDEX conversations_by_run ON conversations (run_id, conversation_id);

CREATE TABLE evaluations (
  evaluation_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  metric_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  scenario_id TEXT,
  conversation_id TEXT REFERENCES conversations (conversation_id),
  turn INTEGER,
  spec_path TEXT,
  score REAL NOT NULL,
  threshold REAL NOT NULL,
  status TEXT NOT NULL,
  judge TEXT NOT NULL,
  reason TEXT NOT NULL,
  evidence_refs TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX evaluations_by_run ON evaluations (run_id, created_at, evaluation_id);

CREATE TABLE gate_results (
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  position INTEGER NOT NULL,
  gate_id TEXT NOT NULL,
  title TEXT,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  evidence_refs TEXT NOT NULL,
  PRIMARY KEY (run_id, position)
) STRICT;
`;
