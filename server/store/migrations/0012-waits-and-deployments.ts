// A planned run may wait before it can start — for a deployment of its commit, or for its agent to
// be ready — until a deadline, after which its decision gives up. Deployments the App hears of
// (a successful deployment_status) are kept per repository, commit and GitHub environment.
export default /* sql */ `
ALTER TABLE release_decision_slots ADD COLUMN waiting_for TEXT;
ALTER TABLE release_decision_slots ADD COLUMN wait_until TEXT;

CREATE TABLE github_deployments (
  repository_id INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  environment TEXT NOT NULL,
  deployment_id INTEGER NOT NULL,
  url TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (repository_id, head_sha, environment, deployment_id)
) STRICT;
`;
