import { z } from "zod";
import { Name, RepositoryName, Timestamp, listOf } from "./common.js";

const RepositoryFields = {
  github_id: z.number().int().positive().describe("The repository's numeric id on GitHub: bindings follow it, not the name"),
  full_name: RepositoryName.describe("owner/name, as it was when bound"),
};

/** A GitHub repository whose pull requests and pushes the project gates; bound to one project at most. */
export const RepositoryBinding = z.object(RepositoryFields).meta({ id: "RepositoryBinding" });
export type RepositoryBinding = z.infer<typeof RepositoryBinding>;

const Repositories = z
  .array(z.strictObject(RepositoryFields))
  .max(100)
  .refine((list) => new Set(list.map((r) => r.github_id)).size === list.length, "a repository is listed twice");

export const Project = z
  .object({
    project_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    repositories: z.array(RepositoryBinding).describe("The GitHub repositories bound to the project"),
    public_badge: z.boolean().describe("Whether /badges/{project_id}/{repository_id}.svg shows its latest decision on a branch to anyone"),
    created_at: Timestamp,
  })
  .meta({ id: "Project" });
export type Project = z.infer<typeof Project>;

export const CreateProjectBody = z
  .strictObject({
    name: Name,
    description: z.string().max(2000).optional(),
    repositories: Repositories.optional().describe("GitHub repositories to bind; each may be bound to one project only"),
    public_badge: z.boolean().optional().describe("Publish a badge of the latest decision on a branch (default false)"),
  })
  .meta({ id: "CreateProjectBody" });
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

export const UpdateProjectBody = z
  .strictObject({
    description: z.string().max(2000).nullable().optional(),
    repositories: Repositories.optional().describe("Replaces the list whole: those left out are unbound"),
    public_badge: z.boolean().optional().describe("Publish a badge of the latest decision on a branch, or stop"),
  })
  .refine((body) => Object.keys(body).length > 0, "name at least one field to change")
  .meta({ id: "UpdateProjectBody" });
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

export const ProjectList = listOf(Project).meta({ id: "ProjectList" });
