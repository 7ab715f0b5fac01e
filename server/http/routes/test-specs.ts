import { z } from "zod";
import { CreateTestSpecBody, CreateTestSpecQuery, ResourceId, TestSpec, TestSpecList, type RepositorySpecFile, type SpecSource } from "../../contract/index.js";
import { assertActsFor, resolveProjectId } from "../../auth/authenticate.js";
import { ApiError } from "../../errors.js";
import { addRepositorySpec, addSpecVersion } from "../../releases/add-spec-version.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";
import { visibleOr404 } from "../../auth/visibility.js";

/** The query's repository, commit_sha and path: all three, or none. */
function sourceOf({ repository, commit_sha, path }: CreateTestSpecQuery): SpecSource | null {
  const given = [repository, commit_sha, path].filter((value) => value !== undefined).length;
  if (given === 0) return null;
  if (given < 3) {
    throw new ApiError("VALIDATION_FAILED", {
      message: "Give repository, commit_sha and path together, or none of them.",
      details: [{ path: "query", message: "repository, commit_sha and path go together" }],
    });
  }
  return { repository: repository!, commit_sha: commit_sha!, path: path! };
}

export function registerTestSpecRoutes(api: Api, deps: ApiDeps) {
  const { store } = deps;

  api.post("/v1/test-specs", {
    config: { scope: "specs:write", acceptsYaml: true, creates: "test_spec_id" },
    bodyLimit: deps.bodyLimits.spec,
    schema: {
      operationId: "createTestSpec",
      tags: ["test-specs"],
      summary: "Add a test spec, or a new version of the spec with that name",
      description:
        "JSON `{project_id, spec}`, or the spec's YAML text with Content-Type application/yaml and `project_id` in the query. " +
        "201 when a version was added; 200 when the content equals the latest version.",
      consumes: ["application/json", "application/yaml"],
      querystring: CreateTestSpecQuery,
      body: CreateTestSpecBody,
      response: responses({ 200: TestSpec, 201: TestSpec }),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const projectId = resolveProjectId(principal, request.body.project_id ?? request.query.project_id);
      visibleOr404(principal, store.getProject(projectId), "Project", projectId);
      const { specSource } = request;
      const source = sourceOf(request.query);
      if (source && !specSource) {
        throw new ApiError("VALIDATION_FAILED", {
          message: "A spec from a repository is sent as its file's text: Content-Type application/yaml, with repository, commit_sha and path in the query, or as {file} in JSON.",
          details: [{ path: "query.repository", message: "needs an application/yaml body" }],
        });
      }
      const { file } = request.body;
      const named = file?.repository ?? source?.repository;
      if (named) assertActsFor(principal, named, store.getProject(projectId)!.repositories, file ? "body.file.repository" : "query.repository");
      const { spec, created } = file ? await addFile(projectId, file) : await addSpecVersion(deps, projectId, request.body.spec!, { text: specSource, source });
      return reply.code(created ? 201 : 200).header("location", `/v1/test-specs/${spec.test_spec_id}`).send(spec);
    },
  });

  /** A repository's spec file with its tables, as a workflow uploads it: read as the App reads it. */
  async function addFile(projectId: string, { content, encoding, tables = [], ...where }: RepositorySpecFile) {
    const bytesOf = (text: string, how: "utf-8" | "base64") => Buffer.from(text, how === "base64" ? "base64" : "utf8");
    const added = await addRepositorySpec(deps, projectId, where, bytesOf(content, encoding), (path) => {
      const table = tables.find((candidate) => candidate.path === path);
      return table && bytesOf(table.content, table.encoding);
    });
    if (added.ok) return added;
    throw new ApiError("VALIDATION_FAILED", {
      message: `The spec file ${where.path} is not valid.`,
      details: added.problems.map((problem) => {
        const table = tables.findIndex((candidate) => candidate.path === problem.file);
        return { path: table >= 0 ? `body.file.tables[${table}]` : "body.file.content", message: `${problem.file}:${problem.line}: ${problem.path}: ${problem.message}` };
      }),
    });
  }

  registerProjectResource(api, deps, { name: "test-spec", scope: "specs:read", list: { response: TestSpecList, items: store.listTestSpecs } });

  api.get("/v1/test-specs/:test_spec_id", {
    config: { scope: "specs:read" },
    schema: {
      operationId: "getTestSpec",
      tags: ["test-specs"],
      summary: "Get a test spec: its latest version, or the one named by spec_version",
      params: z.strictObject({ test_spec_id: ResourceId }),
      querystring: z.strictObject({ spec_version: z.string().min(1).max(200).optional() }),
      response: responses({ 200: TestSpec }),
    },
    handler: async (request) => {
      const { test_spec_id } = request.params;
      const { spec_version } = request.query;
      const spec = spec_version === undefined ? store.getTestSpec(test_spec_id) : store.getTestSpecVersion(test_spec_id, spec_version);
      return visibleOr404(principalOf(request), spec, spec_version ? "Version of test spec" : "Test spec", test_spec_id);
    },
  });
}
