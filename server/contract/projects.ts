import { z } from "zod";
import { Name, Timestamp, listOf } from "./common.js";

export const Project = z
  .object({
    project_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: "Project" });
export type Project = z.infer<typeof Project>;

export const CreateProjectBody = z
  .strictObject({
    name: Name,
    description: z.string().max(2000).optional(),
  })
  .meta({ id: "CreateProjectBody" });
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

export const ProjectList = listOf(Project).meta({ id: "ProjectList" });
