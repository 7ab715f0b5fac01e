import { z } from "zod";
import { CreateProjectBody, Project, ProjectList, ProjectScopedPageQuery, ResourceId } from "../../contract/index.js";
import { ApiError } from "../../errors.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageThrough } from "../paging.js";
import { responses } from "../schemas.js";
import { listProjectFilter, visibleOr404 } from "../../auth/visibility.js";

export function registerProjectRoutes(api: Api, { store, clock, newId, cursors }: ApiDeps) {
  api.post("/v1/projects", {
    config: { scope: "projects:write" },
    schema: { operationId: "createProject", tags: ["projects"], summary: "Create a project (admin key)", body: CreateProjectBody, response: responses({ 201: Project }) },
    handler: async (request, reply) => {
      if (principalOf(request).project_id !== null) {
        throw new ApiError("FORBIDDEN", { message: "Only an admin key can create projects." });
      }
      const [project] = await store.write([
        "createProject",
        { project_id: newId("project"), name: request.body.name, description: request.body.description ?? null, created_at: clock.now().toISOString() },
      ]);
      if (!project) throw new ApiError("CONFLICT", { message: `A project named '${request.body.name}' already exists.` });
      return reply.code(201).header("location", `/v1/projects/${project.project_id}`).send(project);
    },
  });

  api.get("/v1/projects", {
    config: { scope: "projects:read" },
    schema: { operationId: "listProjects", tags: ["projects"], summary: "List projects, newest first", querystring: ProjectScopedPageQuery, response: responses({ 200: ProjectList }) },
    handler: async (request) => {
      const project_id = listProjectFilter(principalOf(request), request.query.project_id);
      return pageThrough(cursors, `projects|${project_id ?? ""}`, request.query, (page) =>
        store.listProjects({ project_id }, page),
      );
    },
  });

  api.get("/v1/projects/:project_id", {
    config: { scope: "projects:read" },
    schema: { operationId: "getProject", tags: ["projects"], summary: "Get a project", params: z.strictObject({ project_id: ResourceId }), response: responses({ 200: Project }) },
    handler: async (request) =>
      visibleOr404(principalOf(request), store.getProject(request.params.project_id), "Project", request.params.project_id),
  });
}
