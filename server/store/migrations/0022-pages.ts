// The run page shows each conversation with its evaluations: found by conversation. A project may
// publish a badge of its latest decision on a branch (off unless it says so).
export default /* sql */ `
CREATE INDEX evaluations_by_conversation ON evaluations (conversation_id);
ALTER TABLE projects ADD COLUMN public_badge INTEGER NOT NULL DEFAULT 0 CHECK (public_badge IN (0, 1));
DROP VIEW project_records;
CREATE VIEW project_records AS
  SELECT p.*, (SELECT json_group_array(json_object('github_id', r.github_id, 'full_name', r.full_name))
               FROM (SELECT github_id, full_name FROM project_repositories WHERE project_id = p.project_id ORDER BY github_id) r
              ) AS repositories
  FROM projects p;
`;
