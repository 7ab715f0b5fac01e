import { z } from "zod";
import {
  CreateTestSpecBody,
  CreateTestSpecQuery,
  ResourceId,
  TestSpec,
  TestSpecList,
  type SpecSource,
} from "../../contract/index.js";
import { assertActsFor, resolveProjectId } from "../../auth/authenticate.js";
import { ApiError } from "../../errors.js";
import { storeSpecVersion } from "../../releases/add-spec-version.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { JsonText } from "../json-text.js";
import { registerProjectResource } from "./project-resource.js";
import { visibleOr404 } from "../../auth/visibility.js";

/** The query's repository, commit_sha and path: all three, or none. */
function sourceOf({ repository, commit_sha, path }: CreateTestSpecQuery): SpecSource | null {
  const given = [repository, commit_sha, path].filter((value) => value !== undefined).length;
  if (given === 0) return null;
  if (given < 3) {
    throw new ApiError("INVALID_PARAMETER_COMBINATION", {
      message: "Give repository, commit_sha and path together, or none of them.",
      details: [{ path: "query", message: "repository, commit_sha and path go together" }],
    });
  }
  return { repository: repository!, commit_sha: commit_sha!, path: path! };
}

export function registerTestSpecRoutes(api: Api, deps: ApiDeps) {
  const { store } = deps;

  api.post("/v1/test-specs", {
    config: {
      scope: "specs:write",
      acceptsYaml: true,
      creates: "test_spec_id",
      location: true,
      errors: [
        "PROJECT_ID_REQUIRED",
        "NOT_FOUND",
        "FORBIDDEN",
        "INVALID_PARAMETER_COMBINATION",
        "SPEC_INCONSISTENT",
        "SPEC_FILE_INVALID",
      ],
    },
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
      // The body is read, parsed and validated off the event loop (the spec reader): a YAML text, or a JSON one.
      const yaml = Buffer.isBuffer(request.body) ? request.body : undefined;
      const source = sourceOf(request.query);
      if (source && !yaml) {
        throw new ApiError("INVALID_PARAMETER_COMBINATION", {
          message:
            "A spec from a repository is sent as its file's text: Content-Type application/yaml, with repository, commit_sha and path in the query, or as {file} in JSON.",
          details: [{ path: "query.repository", message: "needs an application/yaml body" }],
        });
      }
      const json = request.body instanceof JsonText ? request.body : undefined;
      if (!yaml && !json) {
        throw new ApiError("VALIDATION_FAILED", {
          message: "The request has no body: send the spec as JSON or as YAML (application/yaml).",
          details: [{ path: "body", message: "required" }],
        });
      }
      const read = yaml
        ? await deps.specReader.readYamlBody(yaml, source)
        : await deps.specReader.readJsonBody(json!.text);
      if (!read.ok) {
        throw new ApiError(read.code, { message: read.message, ...(read.details ? { details: read.details } : {}) });
      }
      const projectId = resolveProjectId(principal, read.project_id ?? request.query.project_id);
      visibleOr404(principal, await store.getProject(projectId), "Project", projectId);
      const named = read.repository ?? source?.repository;
      if (named) {
        assertActsFor(
          principal,
          named,
          (await store.getProject(projectId))!.repositories,
          read.repository ? "body.file.repository" : "query.repository",
        );
      }
      const { spec, created } = await storeSpecVersion(deps, projectId, read.version);
      // The document goes back as the canonical text it was stored as: a large one is neither parsed nor serialised again here.
      const body = `${JSON.stringify(spec).slice(0, -1)},"spec":${read.version.document}}`;
      return reply
        .code(created ? 201 : 200)
        .header("location", `/v1/test-specs/${spec.test_spec_id}`)
        .type("application/json")
        .send(body as never);
    },
  });

  registerProjectResource(api, deps, {
    name: "test-spec",
    scope: "specs:read",
    list: { response: TestSpecList, items: store.listTestSpecs },
  });

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
      const spec =
        spec_version === undefined
          ? await store.getTestSpec(test_spec_id)
          : await store.getTestSpecVersion(test_spec_id, spec_version);
      return visibleOr404(
        principalOf(request),
        spec,
        spec_version ? "Version of test spec" : "Test spec",
        test_spec_id,
      );
    },
  });
}
