// Release decisions: per project, for a commit of a repository (one per project, repository and
// commit) or for a set of runs. A decision waits for the runs planned in its current attempt; its
// status and reasons are kept up to date in the transaction that changes what they rest on (a run
// ending, a waiver), and each change is an event. Waivers are never edited: a revocation is a
// record of its own. Runs keep their source's repository and commit in columns, to be found by them.
export default /* sql */ `
ALTER TABLE runs ADD COLUMN source_repository TEXT;
ALTER TABLE runs ADD COLUMN source_commit_sha TEXT;
UPDATE runs SET source_repository = json_extract(source, '$.repository'), source_commit_sha = json_extract(source, '$.commit_sha')
  WHERE source IS NOT NULL;
CREATE INDEX runs_by_source ON runs (project_id, source_repository, source_commit_sha, created_at);

CREATE TABLE release_decisions (
  decision_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  repository TEXT,
  commit_sha TEXT,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL,
  reasons TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  decided_at TEXT,
  UNIQUE (project_id, repository, commit_sha)
) STRICT;
CREATE INDEX release_decisions_by_project ON release_decisions (project_id, created_at DESC, decision_id DESC);
CREATE INDEX release_decisions_by_created ON release_decisions (created_at DESC, decision_id DESC);

CREATE TABLE release_decision_slots (
  decision_id TEXT NOT NULL REFERENCES release_decisions (decision_id),
  attempt INTEGER NOT NULL,
  position INTEGER NOT NULL,
  test_spec_id TEXT NOT NULL REFERENCES test_specs (test_spec_id),
  environment_id TEXT NOT NULL REFERENCES environments (environment_id),
  run_id TEXT REFERENCES runs (run_id),
  PRIMARY KEY (decision_id, attempt, position)
) STRICT;
CREATE INDEX release_decision_slots_by_run ON release_decision_slots (run_id);

CREATE TABLE release_decision_events (
  decision_id TEXT NOT NULL REFERENCES release_decisions (decision_id),
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  run_id TEXT,
  data TEXT NOT NULL,
  PRIMARY KEY (decision_id, sequence)
) STRICT;

CREATE TABLE waivers (
  waiver_id TEXT PRIMARY KEY,
  decision_id TEXT NOT NULL REFERENCES release_decisions (decision_id),
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  gate_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  expires_at TEXT,
  revokes TEXT REFERENCES waivers (waiver_id),
  created_by_key TEXT,
  created_by_login TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX waivers_by_decision ON waivers (decision_id, waiver_id);
CREATE UNIQUE INDEX waivers_revoked_once ON waivers (revokes) WHERE revokes IS NOT NULL;
`;
