import type { Project, ProjectOidc, RepositoryBinding } from "../contract/index.js";
import type { Sql } from "./sql/sql.js";
import type { ListPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";

export type ProjectRow = Omit<Project, "repositories" | "public_badge" | "oidc"> & {
  public_badge?: boolean;
  oidc?: ProjectOidc | null | undefined;
};

/** A project as stored, read through the `project_records` view: its repositories and OIDC restrictions as JSON. */
type ProjectRecord = Omit<ProjectRow, "public_badge" | "oidc"> & {
  repositories: string;
  public_badge: 0 | 1;
  oidc: string | null;
};

const toProject = (record: ProjectRecord): Project => ({
  ...record,
  repositories: JSON.parse(record.repositories) as RepositoryBinding[],
  public_badge: record.public_badge === 1,
  oidc: record.oidc === null ? null : (JSON.parse(record.oidc) as ProjectOidc),
});

/** What binding repositories to a project did: bound, or refused because one is another project's. */
export type BindingOutcome =
  { kind: "bound"; project: Project } | { kind: "bound_elsewhere"; repository: RepositoryBinding };

export function makeProjectsStore(db: Sql, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO projects (project_id, name, description, public_badge, oidc, created_at)
    VALUES (@project_id, @name, @description, @public_badge, @oidc, @created_at) ON CONFLICT (name) DO NOTHING`);
  const updateOidc = db.prepare("UPDATE projects SET oidc = ? WHERE project_id = ?");
  const updateDescription = db.prepare("UPDATE projects SET description = ? WHERE project_id = ?");
  const updateBadge = db.prepare("UPDATE projects SET public_badge = ? WHERE project_id = ?");
  const projects = makeProjectTable<ProjectRecord, Project>(db, listPage, "project_records", "project_id", toProject);
  const byName = db.prepare("SELECT * FROM project_records WHERE name = ?");
  const byRepository = db.prepare(
    "SELECT p.* FROM project_records p JOIN project_repositories r ON r.project_id = p.project_id WHERE r.github_id = ?",
  );
  const boundTo = db.prepare("SELECT project_id FROM project_repositories WHERE github_id = ?").pluck();
  const unbindAll = db.prepare("DELETE FROM project_repositories WHERE project_id = ?");
  const bind = db.prepare(
    "INSERT INTO project_repositories (github_id, project_id, full_name, bound_at) VALUES (?, ?, ?, ?)",
  );

  /** Replaces the project's repositories, unless one of them is bound to another project: then nothing changes. */
  async function bindRepositories(
    projectId: string,
    repositories: readonly RepositoryBinding[],
    now: string,
  ): Promise<BindingOutcome> {
    const taken = await firstBound(repositories, (owner) => owner !== projectId);
    if (taken) return { kind: "bound_elsewhere", repository: taken };
    await unbindAll.run(projectId);
    for (const { github_id, full_name } of repositories) await bind.run(github_id, projectId, full_name, now);
    return { kind: "bound", project: (await projects.get(projectId))! };
  }

  /** The first of `repositories` bound to a project that `isOther` says is another one. */
  async function firstBound(
    repositories: readonly RepositoryBinding[],
    isOther: (owner: string) => boolean,
  ): Promise<RepositoryBinding | undefined> {
    for (const repository of repositories) {
      const owner = await boundTo.get<string>(repository.github_id);
      if (owner !== undefined && isOther(owner)) return repository;
    }
    return undefined;
  }

  return {
    reads: {
      getProject: projects.get,
      async getProjectByName(name: string): Promise<Project | undefined> {
        const record = await byName.get<ProjectRecord>(name);
        return record && toProject(record);
      },
      /** The project a GitHub repository is bound to, by the repository's numeric id. */
      async getProjectByRepository(githubId: number): Promise<Project | undefined> {
        const record = await byRepository.get<ProjectRecord>(githubId);
        return record && toProject(record);
      },
      listProjects: projects.list,
    },
    writes: {
      /**
       * Creates the project with its repositories: undefined if a project of that name exists; a
       * refusal, and no project, if a repository is bound to another one.
       */
      async createProject(
        row: ProjectRow,
        repositories: readonly RepositoryBinding[] = [],
      ): Promise<BindingOutcome | undefined> {
        const taken = await firstBound(repositories, () => true);
        if (taken) return { kind: "bound_elsewhere", repository: taken };
        if (
          (
            await insert.run({
              ...row,
              public_badge: row.public_badge ? 1 : 0,
              oidc: row.oidc ? JSON.stringify(row.oidc) : null,
            })
          ).changes !== 1
        ) {
          return undefined;
        }
        return bindRepositories(row.project_id, repositories, row.created_at);
      },
      /** Changes what is given; `repositories` replaces the list whole. Undefined if there is no such project. */
      async updateProject(
        projectId: string,
        change: {
          description?: string | null | undefined;
          repositories?: readonly RepositoryBinding[] | undefined;
          public_badge?: boolean | undefined;
          oidc?: ProjectOidc | null | undefined;
        },
        now: string,
      ): Promise<BindingOutcome | undefined> {
        if (!(await projects.get(projectId))) return undefined;
        if (change.repositories !== undefined) {
          const outcome = await bindRepositories(projectId, change.repositories, now);
          if (outcome.kind !== "bound") return outcome;
        }
        if (change.description !== undefined) await updateDescription.run(change.description, projectId);
        if (change.public_badge !== undefined) await updateBadge.run(change.public_badge ? 1 : 0, projectId);
        if (change.oidc !== undefined) {
          await updateOidc.run(change.oidc === null ? null : JSON.stringify(change.oidc), projectId);
        }
        return { kind: "bound", project: (await projects.get(projectId))! };
      },
    },
  };
}
