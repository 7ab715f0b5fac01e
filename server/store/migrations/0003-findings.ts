export default /* sql */ `
CREATE TABLE findings (
  finding_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  probe_id TEXT NOT NULL,
  category TEXT NOT NULL,
  owasp TEXT NOT NULL,
  severity TEXT NOT NULL,
  severity_rank INTEGER NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  status TEXT NOT NULL,
  spec_path TEXT,
  evidence_refs TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX findings_by_run ON findings (run_id, finding_id);
`;
