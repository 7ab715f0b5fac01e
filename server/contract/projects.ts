import { z } from "zod";
import { Name, RepositoryName, Timestamp, listOf } from "./common.js";

const RepositoryFields = {
  github_id: z
    .number()
    .int()
    .positive()
    .describe("The repository's numeric id on GitHub: bindings follow it, not the name"),
  full_name: RepositoryName.describe("owner/name, as it was when bound"),
};

/** A GitHub repository whose pull requests and pushes the project gates; bound to one project at most. */
export const RepositoryBinding = z.object(RepositoryFields).meta({ id: "RepositoryBinding" });
export type RepositoryBinding = z.infer<typeof RepositoryBinding>;

const Repositories = z
  .array(z.strictObject(RepositoryFields))
  .max(100)
  .refine((list) => new Set(list.map((r) => r.github_id)).size === list.length, "a repository is listed twice");

const GlobList = (what: string) =>
  z
    .array(z.string().min(1).max(300))
    .min(1)
    .max(50)
    .optional()
    .describe(`${what}: globs (\`*\` matches any characters, slashes included); one must match`);

/**
 * Which workflow runs of the project's repositories may sign in with their GitHub OIDC token: by
 * the token's `ref`, `event_name` and `workflow_ref`. Left out: any.
 */
export const ProjectOidc = z
  .strictObject({
    refs: GlobList("The token's ref, e.g. refs/heads/main or refs/pull/*/merge"),
    events: z
      .array(z.string().regex(/^[a-z_]{1,64}$/, "a GitHub event name, e.g. pull_request"))
      .min(1)
      .max(50)
      .optional()
      .describe("The token's event_name, e.g. pull_request, push"),
    workflows: GlobList("The token's workflow_ref, e.g. acme/refunds/.github/workflows/assure.yml@*"),
  })
  .meta({ id: "ProjectOidc" });
export type ProjectOidc = z.infer<typeof ProjectOidc>;

export const Project = z
  .object({
    project_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    repositories: z.array(RepositoryBinding).describe("The GitHub repositories bound to the project"),
    public_badge: z
      .boolean()
      .describe("Whether /badges/{project_id}/{repository_id}.svg shows its latest decision on a branch to anyone"),
    oidc: ProjectOidc.nullable().describe(
      "Which workflow runs may sign in with GitHub OIDC; null: any of the bound repositories'",
    ),
    created_at: Timestamp,
  })
  .meta({ id: "Project" });
export type Project = z.infer<typeof Project>;

export const CreateProjectBody = z
  .strictObject({
    name: Name,
    description: z.string().max(2000).optional(),
    repositories: Repositories.optional().describe(
      "GitHub repositories to bind; each may be bound to one project only",
    ),
    public_badge: z.boolean().optional().describe("Publish a badge of the latest decision on a branch (default false)"),
    oidc: ProjectOidc.optional().describe("Restrict GitHub OIDC sign-in to these refs, events and workflows"),
  })
  .meta({ id: "CreateProjectBody" });
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

export const UpdateProjectBody = z
  .strictObject({
    description: z.string().max(2000).nullable().optional(),
    repositories: Repositories.optional().describe("Replaces the list whole: those left out are unbound"),
    public_badge: z.boolean().optional().describe("Publish a badge of the latest decision on a branch, or stop"),
    oidc: ProjectOidc.nullable()
      .optional()
      .describe("Restrict GitHub OIDC sign-in (replaced whole); null lifts the restriction"),
  })
  .refine((body) => Object.keys(body).length > 0, "name at least one field to change")
  .meta({ id: "UpdateProjectBody", minProperties: 1 });
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

export const ProjectList = listOf(Project).meta({ id: "ProjectList" });
