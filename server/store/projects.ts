import type { Project } from "../contract/index.js";
import type { Db } from "./db.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";

export type ProjectRow = Project;

export function makeProjectsStore(db: Db, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO projects (project_id, name, description, created_at)
    VALUES (@project_id, @name, @description, @created_at) ON CONFLICT (name) DO NOTHING`);
  const byId = db.prepare("SELECT * FROM projects WHERE project_id = ?");
  const byName = db.prepare("SELECT * FROM projects WHERE name = ?");

  return {
    reads: {
      getProject(projectId: string): Project | undefined {
        return byId.get(projectId) as ProjectRow | undefined;
      },
      getProjectByName(name: string): Project | undefined {
        return byName.get(name) as ProjectRow | undefined;
      },
      listProjects(filter: { project_id?: string | undefined }, page: PageRequest): RowPage<Project> {
        const filters = filter.project_id ? [["project_id = ?", filter.project_id] as const] : [];
        return listPage<ProjectRow>("projects", "project_id", filters, page);
      },
    },
    writes: {
      /** Creates the project, or returns undefined if one of that name exists. */
      createProject(row: ProjectRow): Project | undefined {
        return insert.run(row).changes === 1 ? row : undefined;
      },
    },
  };
}
