// Outbound webhooks. A delivery is the pending (or settled) sending of one event to one endpoint:
// written in the transaction that writes the event (the outbox), so a crash can delay it, never
// lose it. Each try is kept (`webhook_attempts`). The event's body is read from where the event is
// (`run_events` or `release_decision_events`), never copied.
export default /* sql */ `
CREATE TABLE webhooks (
  webhook_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  url TEXT NOT NULL,
  event_types TEXT,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  disabled_reason TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_until TEXT,
  failing_since TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
) STRICT;
CREATE INDEX webhooks_by_project ON webhooks (project_id, webhook_id);
CREATE VIEW live_webhooks AS SELECT * FROM webhooks WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  delivery_id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks (webhook_id),
  event_id TEXT NOT NULL,
  event_source TEXT NOT NULL CHECK (event_source IN ('run', 'decision')),
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  lease_until TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, delivery_id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (webhook_id, event_id);

CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (delivery_id),
  attempt INTEGER NOT NULL,
  webhook_id TEXT NOT NULL,
  attempted_at TEXT NOT NULL,
  response_status INTEGER,
  duration_ms REAL NOT NULL,
  error TEXT,
  next_attempt_at TEXT,
  PRIMARY KEY (delivery_id, attempt)
) STRICT;
CREATE INDEX webhook_attempts_by_webhook ON webhook_attempts (webhook_id, attempted_at);
`;
