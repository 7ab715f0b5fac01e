import { z } from "zod";
import { Name, OwningProject, Timestamp, listOf } from "./common.js";

export const Agent = z
  .object({
    agent_id: z.string(),
    project_id: z.string(),
    name: z.string(),
    version: z.string().describe("Version of the agent under test; every run records it"),
    description: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: "Agent" });
export type Agent = z.infer<typeof Agent>;

export const CreateAgentBody = z
  .strictObject({
    project_id: OwningProject,
    name: Name,
    version: z.string().min(1).max(200),
    description: z.string().max(2000).optional(),
  })
  .meta({ id: "CreateAgentBody" });
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

export const AgentList = listOf(Agent).meta({ id: "AgentList" });
