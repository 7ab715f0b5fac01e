// A project names the GitHub repositories it gates; a repository is bound to one project at
// most, by its numeric id (names change). Projects are read with their repositories.
export default /* sql */ `
CREATE TABLE project_repositories (
  github_id INTEGER PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (project_id),
  full_name TEXT NOT NULL,
  bound_at TEXT NOT NULL
) STRICT;
CREATE INDEX project_repositories_by_project ON project_repositories (project_id, github_id);

CREATE VIEW project_records AS
  SELECT p.*, (SELECT json_group_array(json_object('github_id', r.github_id, 'full_name', r.full_name))
               FROM (SELECT github_id, full_name FROM project_repositories WHERE project_id = p.project_id ORDER BY github_id) r
              ) AS repositories
  FROM projects p;
`;
