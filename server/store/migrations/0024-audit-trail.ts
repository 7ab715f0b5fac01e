// The audit trail: who wrote what, appended in the transaction of the write itself, and never
// changed or removed (the triggers refuse it, whatever the SQL). Keys note when they were last used.
export default /* sql */ `
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;

CREATE TABLE audit_events (
  audit_event_id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  actor_type TEXT NOT NULL CHECK (actor_type IN ('api_key', 'cli', 'github_oidc')),
  actor_key_id TEXT,
  actor_label TEXT,
  action TEXT NOT NULL,
  resource_id TEXT,
  project_id TEXT,
  request_id TEXT,
  client_address TEXT
) STRICT;
CREATE INDEX audit_events_by_time ON audit_events (created_at DESC, audit_event_id DESC);
CREATE INDEX audit_events_by_project ON audit_events (project_id, created_at DESC, audit_event_id DESC);

CREATE TRIGGER audit_events_are_not_changed BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_events_are_not_deleted BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
`;
