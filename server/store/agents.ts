import type { Agent } from "../contract/index.js";
import type { Db } from "./db.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";

export type AgentRow = Agent;

export function makeAgentsStore(db: Db, listPage: ListPage) {
  const insert = db.prepare(`INSERT INTO agents (agent_id, project_id, name, version, description, created_at)
    VALUES (@agent_id, @project_id, @name, @version, @description, @created_at)`);
  const byId = db.prepare("SELECT * FROM agents WHERE agent_id = ?");

  return {
    reads: {
      getAgent(agentId: string): Agent | undefined {
        return byId.get(agentId) as AgentRow | undefined;
      },
      listAgents(filter: { project_id?: string | undefined }, page: PageRequest): RowPage<Agent> {
        const filters = filter.project_id ? [["project_id = ?", filter.project_id] as const] : [];
        return listPage<AgentRow>("agents", "agent_id", filters, page);
      },
    },
    writes: {
      createAgent(row: AgentRow): Agent {
        insert.run(row);
        return row;
      },
    },
  };
}
