import type { Project } from "../contract/index.js";
import type { Db } from "./db.js";
import type { ListPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";

export type ProjectRow = Project;

export function makeProjectsStore(db: Db, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO projects (project_id, name, description, created_at)
    VALUES (@project_id, @name, @description, @created_at) ON CONFLICT (name) DO NOTHING`);
  const projects = makeProjectTable<ProjectRow>(db, listPage, "projects", "project_id");
  const byName = db.prepare("SELECT * FROM projects WHERE name = ?");

  return {
    reads: {
      getProject: projects.get,
      getProjectByName(name: string): Project | undefined {
        return byName.get(name) as ProjectRow | undefined;
      },
      listProjects: projects.list,
    },
    writes: {
      /** Creates the project, or returns undefined if one of that name exists. */
      createProject(row: ProjectRow): Project | undefined {
        return insert.run(row).changes === 1 ? row : undefined;
      },
    },
  };
}
