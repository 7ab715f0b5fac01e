import type { EndpointProtocol, Environment } from "../contract/index.js";
import type { Db } from "./db.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";

export interface EnvironmentRow {
  environment_id: string;
  project_id: string;
  name: string;
  agent_id: string;
  protocol: EndpointProtocol;
  base_url: string;
  model: string | null;
  readiness_path: string;
  /** JSON object of header name → value. Write-only: never leaves the service except to the agent. */
  headers: string;
  created_at: string;
}

/** What the service needs to reach an environment's agent, header values included. */
export interface EnvironmentTarget {
  environment_id: string;
  protocol: EndpointProtocol;
  base_url: string;
  model: string | null;
  readiness_path: string;
  headers: Record<string, string>;
}

export function toEnvironment(row: EnvironmentRow): Environment {
  return {
    environment_id: row.environment_id,
    project_id: row.project_id,
    name: row.name,
    agent_id: row.agent_id,
    endpoint: {
      protocol: row.protocol,
      base_url: row.base_url,
      model: row.model,
      readiness_path: row.readiness_path,
      header_names: Object.keys(JSON.parse(row.headers) as Record<string, string>),
    },
    created_at: row.created_at,
  };
}

export function toEnvironmentTarget(row: EnvironmentRow): EnvironmentTarget {
  return {
    environment_id: row.environment_id,
    protocol: row.protocol,
    base_url: row.base_url,
    model: row.model,
    readiness_path: row.readiness_path,
    headers: JSON.parse(row.headers) as Record<string, string>,
  };
}

export function makeEnvironmentsStore(db: Db, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO environments
    (environment_id, project_id, name, agent_id, protocol, base_url, model, readiness_path, headers, created_at)
    VALUES (@environment_id, @project_id, @name, @agent_id, @protocol, @base_url, @model, @readiness_path, @headers, @created_at)
    ON CONFLICT (project_id, name) DO NOTHING`);
  const environments = makeProjectTable<EnvironmentRow>(db, listPage, "environments", "environment_id");
  const byName = db.prepare("SELECT * FROM environments WHERE project_id = ? AND name = ?");

  return {
    reads: {
      getEnvironmentRow: environments.get,
      getEnvironmentRowByName(projectId: string, name: string): EnvironmentRow | undefined {
        return byName.get(projectId, name) as EnvironmentRow | undefined;
      },
      listEnvironments(filter: { project_id?: string | undefined }, page: PageRequest): RowPage<Environment> {
        const { rows, next } = environments.list(filter, page);
        return { rows: rows.map(toEnvironment), next };
      },
    },
    writes: {
      /** Creates the environment, or returns undefined if its project has one of that name. */
      createEnvironment(row: EnvironmentRow): Environment | undefined {
        return insert.run(row).changes === 1 ? toEnvironment(row) : undefined;
      },
    },
  };
}
