// The GitHub App's records. Deliveries are kept and deduplicated on their id before GitHub is
// answered, and processed after. A gated commit is a (repository, head SHA, check name) the App
// publishes a check run for: its decision, or the problem that kept it from being gated; `synced_at`
// is the decision's `updated_at` (or the problem's time) the App last published. Check runs are
// the ones the App created, newest last; what was published is kept to compare with.
export default /* sql */ `
CREATE TABLE github_deliveries (
  delivery_id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  action TEXT,
  payload TEXT NOT NULL,
  received_at TEXT NOT NULL
) STRICT;

CREATE TABLE github_commits (
  repository_id INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  check_name TEXT NOT NULL,
  repository TEXT NOT NULL,
  installation_id INTEGER NOT NULL,
  ref TEXT,
  pull_request INTEGER,
  project_id TEXT REFERENCES projects (project_id),
  decision_id TEXT REFERENCES release_decisions (decision_id),
  problem TEXT,
  updated_at TEXT NOT NULL,
  synced_at TEXT,
  PRIMARY KEY (repository_id, head_sha, check_name)
) STRICT;
CREATE INDEX github_commits_by_decision ON github_commits (decision_id);

CREATE TABLE github_check_runs (
  check_run_id INTEGER PRIMARY KEY,
  repository_id INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  check_name TEXT NOT NULL,
  status TEXT NOT NULL,
  conclusion TEXT,
  published TEXT NOT NULL,
  annotations_sent INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX github_check_runs_by_commit ON github_check_runs (repository_id, head_sha, check_name, check_run_id);
`;
