import { CreateProjectBody, Project, ProjectList } from "../../contract/index.js";
import { ApiError } from "../../errors.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";

export function registerProjectRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId } = deps;

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

  registerProjectResource(api, deps, {
    name: "project",
    scope: "projects:read",
    list: { response: ProjectList, items: store.listProjects },
    get: { response: Project, row: store.getProject, toItem: (project) => project },
  });
}
