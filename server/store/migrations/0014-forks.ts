// Pull requests from forks: a gated commit remembers its base commit and whether it came from a
// fork (events after the pull request's, a button pressed, do not say), and each press of a fork's
// "Approve and run" button is kept: who, with what access, whether it was granted.
export default /* sql */ `
ALTER TABLE github_commits ADD COLUMN base_sha TEXT;
ALTER TABLE github_commits ADD COLUMN fork INTEGER NOT NULL DEFAULT 0;

CREATE TABLE github_approval_presses (
  repository_id INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  login TEXT NOT NULL,
  permission TEXT NOT NULL,
  granted INTEGER NOT NULL,
  pressed_at TEXT NOT NULL,
  delivery_id TEXT NOT NULL UNIQUE
) STRICT;
CREATE INDEX github_approval_presses_by_commit ON github_approval_presses (repository_id, head_sha, pressed_at);
`;
