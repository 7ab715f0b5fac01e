// A pull request's decision is compared with its base branch: what the client gave of the base
// (its first-parent chain, the base's settings, the policy changes found), the baseline chosen
// from it when the decision was made, the base branch's recent decisions (for flakiness), and the
// case-by-case comparison kept with the reasons. A waiver of the decision's `policy` pseudo-gate
// names no run (a policy approval), so a waiver's run becomes optional (SQLite rebuilds the table
// to drop NOT NULL).
export default /* sql */ `
ALTER TABLE release_decisions ADD COLUMN base TEXT;
ALTER TABLE release_decisions ADD COLUMN baseline TEXT;
ALTER TABLE release_decisions ADD COLUMN history TEXT;
ALTER TABLE release_decisions ADD COLUMN changes TEXT;

CREATE TABLE waivers_v2 (
  waiver_id TEXT PRIMARY KEY,
  decision_id TEXT NOT NULL REFERENCES release_decisions (decision_id),
  run_id TEXT REFERENCES runs (run_id),
  gate_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  expires_at TEXT,
  revokes TEXT REFERENCES waivers_v2 (waiver_id),
  created_by_key TEXT,
  created_by_login TEXT,
  created_at TEXT NOT NULL
) STRICT;
INSERT INTO waivers_v2 SELECT waiver_id, decision_id, run_id, gate_id, reason, expires_at, revokes, created_by_key, created_by_login, created_at FROM waivers;
DROP TABLE waivers;
ALTER TABLE waivers_v2 RENAME TO waivers;
CREATE INDEX waivers_by_decision ON waivers (decision_id, waiver_id);
CREATE UNIQUE INDEX waivers_revoked_once ON waivers (revokes) WHERE revokes IS NOT NULL;

-- A press of "Approve policy" is kept beside the fork approvals, with why it was refused.
ALTER TABLE github_approval_presses ADD COLUMN action TEXT NOT NULL DEFAULT 'approve';
ALTER TABLE github_approval_presses ADD COLUMN refusal TEXT;
`;
