// Sign-in with GitHub OIDC, tightened: each token is exchanged once (its jti kept until it
// expires), and a project may restrict which refs, events and workflows sign in (JSON).
export default /* sql */ `
ALTER TABLE projects ADD COLUMN oidc TEXT;
DROP VIEW project_records;
CREATE VIEW project_records AS
  SELECT p.*, (SELECT json_group_array(json_object('github_id', r.github_id, 'full_name', r.full_name))
               FROM (SELECT github_id, full_name FROM project_repositories WHERE project_id = p.project_id ORDER BY github_id) r
              ) AS repositories
  FROM projects p;
CREATE TABLE oidc_token_uses (
  jti TEXT PRIMARY KEY,
  expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX oidc_token_uses_by_expiry ON oidc_token_uses (expires_at);
`;
