import type { EndpointProtocol, Environment, HttpEndpoint, Pricing } from "../contract/index.js";
import type { Sealer } from "../secrets/sealer.js";
import type { Sql } from "./sql/sql.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";
import { SEALED_AT } from "./sealing.js";

export interface EnvironmentRow {
  environment_id: string;
  project_id: string;
  name: string;
  agent_id: string;
  protocol: EndpointProtocol;
  /** The agent's base URL, or a template of it filled from a run's source. */
  base_url: string;
  /** Other URLs the agent may be reached at; null: only base_url. */
  url_pattern: string | null;
  model: string | null;
  readiness_path: string;
  /** Calls in flight to the agent, across every run against it. */
  max_concurrency: number;
  rate_limit_per_minute: number | null;
  /** How long to wait for the agent's late spans after a conversation's last answer; null: the default. */
  trace_wait_ms: number | null;
  /** JSON object of header name → value, sealed: it never leaves the service except to the agent. */
  headers: string;
  /** The header names, in the clear: the API shows them. */
  header_names: string[];
  pricing: Pricing;
  /** protocol http: how the agent is called and read; null for the others. */
  http: HttpEndpoint | null;
  created_at: string;
}

/** The row as stored: the header names, the pricing and the http mapping are JSON. */
interface DbEnvironment extends Omit<EnvironmentRow, "header_names" | "pricing" | "http"> {
  header_names: string;
  pricing: string;
  http: string | null;
}

const fromDb = (row: DbEnvironment): EnvironmentRow => ({
  ...row,
  header_names: JSON.parse(row.header_names) as string[],
  pricing: JSON.parse(row.pricing) as Pricing,
  http: row.http === null ? null : (JSON.parse(row.http) as HttpEndpoint),
});

/** An environment to create: its header values given plain, to be sealed by the store. */
export type NewEnvironment = Omit<EnvironmentRow, "headers" | "header_names" | "trace_wait_ms"> & {
  headers: Record<string, string>;
  trace_wait_ms?: number | null;
};

/** A change to an environment's endpoint: every field but the headers, which are kept unless given. */
export type EnvironmentChange = Pick<
  EnvironmentRow,
  | "base_url"
  | "url_pattern"
  | "model"
  | "readiness_path"
  | "max_concurrency"
  | "rate_limit_per_minute"
  | "trace_wait_ms"
  | "pricing"
  | "http"
> & {
  headers?: Record<string, string>;
};

/** What the service needs to reach an environment's agent, header values included. */
export interface EnvironmentTarget {
  environment_id: string;
  protocol: EndpointProtocol;
  base_url: string;
  model: string | null;
  readiness_path: string;
  headers: Record<string, string>;
  max_concurrency: number;
  rate_limit_per_minute: number | null;
  /** How long to wait for the agent's late spans; null or absent: the default. */
  trace_wait_ms?: number | null;
  /** protocol http: how the agent is called and read. */
  http: HttpEndpoint | null;
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
      url_pattern: row.url_pattern,
      model: row.model,
      readiness_path: row.readiness_path,
      max_concurrency: row.max_concurrency,
      rate_limit_per_minute: row.rate_limit_per_minute,
      trace_wait_ms: row.trace_wait_ms,
      header_names: row.header_names,
      pricing: row.pricing,
      request: row.http?.request ?? null,
      response: row.http?.response ?? null,
    },
    created_at: row.created_at,
  };
}

export function makeEnvironmentsStore(db: Sql, listPage: ListPage, sealer: Sealer) {
  const insert = db.prepare(`INSERT INTO environments
    (environment_id, project_id, name, agent_id, protocol, base_url, url_pattern, model, readiness_path, max_concurrency, rate_limit_per_minute, trace_wait_ms, headers, header_names, pricing, http, created_at)
    VALUES (@environment_id, @project_id, @name, @agent_id, @protocol, @base_url, @url_pattern, @model, @readiness_path, @max_concurrency, @rate_limit_per_minute, @trace_wait_ms, @headers, @header_names, @pricing, @http, @created_at)
    ON CONFLICT (project_id, name) DO NOTHING`);
  const environments = makeProjectTable<DbEnvironment, EnvironmentRow>(
    db,
    listPage,
    "environments",
    "environment_id",
    fromDb,
  );
  const byName = db.prepare("SELECT * FROM environments WHERE project_id = ? AND name = ?");
  const update = db.prepare(`UPDATE environments SET base_url = @base_url, url_pattern = @url_pattern, model = @model,
      readiness_path = @readiness_path, max_concurrency = @max_concurrency, rate_limit_per_minute = @rate_limit_per_minute, trace_wait_ms = @trace_wait_ms, pricing = @pricing, http = @http, headers = coalesce(@headers, headers), header_names = coalesce(@header_names, header_names)
    WHERE environment_id = @environment_id`);

  return {
    reads: {
      getEnvironmentRow: environments.get,
      async getEnvironmentRowByName(projectId: string, name: string): Promise<EnvironmentRow | undefined> {
        const row = await byName.get<DbEnvironment>(projectId, name);
        return row && fromDb(row);
      },
      /** How to reach an environment's agent, its header values unsealed. */
      async getEnvironmentTarget(environmentId: string): Promise<EnvironmentTarget | undefined> {
        const row = await environments.get(environmentId);
        if (!row) return undefined;
        const headers = sealer.open(row.headers, SEALED_AT.environmentHeaders(row.environment_id));
        const { protocol, base_url, model, readiness_path, max_concurrency, rate_limit_per_minute, trace_wait_ms } =
          row;
        return {
          environment_id: row.environment_id,
          protocol,
          base_url,
          model,
          readiness_path,
          max_concurrency,
          rate_limit_per_minute,
          trace_wait_ms,
          headers: JSON.parse(headers) as Record<string, string>,
          http: row.http,
        };
      },
      async listEnvironments(
        filter: { project_id?: string | undefined },
        page: PageRequest,
      ): Promise<RowPage<Environment>> {
        const { rows, next } = await environments.list(filter, page);
        return { rows: rows.map(toEnvironment), next };
      },
    },
    writes: {
      /** Creates the environment, its header values sealed, or returns undefined if its project has one of that name. */
      async createEnvironment({ headers, ...environment }: NewEnvironment): Promise<Environment | undefined> {
        const row: EnvironmentRow = {
          ...environment,
          trace_wait_ms: environment.trace_wait_ms ?? null,
          headers: sealer.seal(JSON.stringify(headers), SEALED_AT.environmentHeaders(environment.environment_id)),
          header_names: Object.keys(headers),
        };
        const stored: DbEnvironment = {
          ...row,
          header_names: JSON.stringify(row.header_names),
          pricing: JSON.stringify(row.pricing),
          http: row.http && JSON.stringify(row.http),
        };
        return (await insert.run(stored)).changes === 1 ? toEnvironment(row) : undefined;
      },
      /** Changes how the agent is reached; headers, if given, replace the old ones whole (sealed). */
      async updateEnvironment(environmentId: string, change: EnvironmentChange): Promise<Environment | undefined> {
        const sealed = change.headers && {
          headers: sealer.seal(JSON.stringify(change.headers), SEALED_AT.environmentHeaders(environmentId)),
          header_names: JSON.stringify(Object.keys(change.headers)),
        };
        const { changes } = await update.run({
          ...change,
          pricing: JSON.stringify(change.pricing),
          http: change.http && JSON.stringify(change.http),
          headers: null,
          header_names: null,
          ...sealed,
          environment_id: environmentId,
        });
        return changes === 1 ? toEnvironment((await environments.get(environmentId))!) : undefined;
      },
    },
  };
}
