import type { Agent } from "../contract/index.js";
import type { Sql } from "./sql/sql.js";
import type { ListPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";

export type AgentRow = Agent;

export function makeAgentsStore(db: Sql, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO agents (agent_id, project_id, name, version, description, created_at)
    VALUES (@agent_id, @project_id, @name, @version, @description, @created_at)`);
  const agents = makeProjectTable<AgentRow>(db, listPage, "agents", "agent_id");

  return {
    reads: {
      getAgent: agents.get,
      listAgents: agents.list,
    },
    writes: {
      async createAgent(row: AgentRow): Promise<Agent> {
        await insert.run(row);
        return row;
      },
    },
  };
}
