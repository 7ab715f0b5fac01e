import { z } from "zod";
import { CreateProjectBody, Project, ProjectList, ResourceId, UpdateProjectBody } from "../../contract/index.js";
import { visibleOr404 } from "../../auth/visibility.js";
import { ApiError } from "../../errors.js";
import type { BindingOutcome } from "../../store/projects.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";

/** The project a binding made, or the 409 for a repository that is already another project's. */
function boundProject(outcome: BindingOutcome) {
  if (outcome.kind === "bound") return outcome.project;
  const { full_name, github_id } = outcome.repository;
  throw new ApiError("CONFLICT", {
    message: `The repository ${full_name} (${github_id}) is bound to another project; unbind it there first.`,
  });
}

export function registerProjectRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId } = deps;
  const adminOnly = (request: Parameters<typeof principalOf>[0], what: string) => {
    if (principalOf(request).project_id !== null) {
      throw new ApiError("FORBIDDEN", { message: `Only an admin key can ${what}.` });
    }
  };

  api.post("/v1/projects", {
    config: { scope: "projects:write", creates: "project_id", location: true, errors: ["FORBIDDEN", "CONFLICT"] },
    schema: {
      operationId: "createProject",
      tags: ["projects"],
      summary: "Create a project (admin key)",
      body: CreateProjectBody,
      response: responses({ 201: Project }),
    },
    handler: async (request, reply) => {
      adminOnly(request, "create projects");
      const { name, description, repositories = [], public_badge = false, oidc = null } = request.body;
      const row = {
        project_id: newId("project"),
        name,
        description: description ?? null,
        public_badge,
        oidc,
        created_at: clock.now().toISOString(),
      };
      const [outcome] = await store.write(["createProject", row, repositories]);
      if (!outcome) throw new ApiError("CONFLICT", { message: `A project named '${name}' already exists.` });
      const project = boundProject(outcome);
      return reply.code(201).header("location", `/v1/projects/${project.project_id}`).send(project);
    },
  });

  api.patch("/v1/projects/:project_id", {
    config: { scope: "projects:write", errors: ["FORBIDDEN", "CONFLICT"] },
    schema: {
      operationId: "updateProject",
      tags: ["projects"],
      summary:
        "Change a project's description, its repositories (the list is replaced whole), its public badge or who may sign in with GitHub OIDC (admin key)",
      params: z.strictObject({ project_id: ResourceId }),
      body: UpdateProjectBody,
      response: responses({ 200: Project }),
    },
    handler: async (request) => {
      adminOnly(request, "change projects");
      const { project_id } = request.params;
      visibleOr404(principalOf(request), await store.getProject(project_id), "Project", project_id);
      const [outcome] = await store.write(["updateProject", project_id, request.body, clock.now().toISOString()]);
      if (!outcome) throw new ApiError("NOT_FOUND", { message: `Project '${project_id}' was not found.` });
      return boundProject(outcome);
    },
  });

  registerProjectResource(api, deps, {
    name: "project",
    scope: "projects:read",
    list: { response: ProjectList, items: store.listProjects },
    get: { response: Project, row: store.getProject, toItem: (project) => project },
  });
}
