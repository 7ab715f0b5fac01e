import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../../auth/authenticate.js";
import { z } from "zod";
import {
  CreateRunBody,
  Evidence,
  ListRunsQuery,
  ResourceId,
  Run,
  RunList,
  UploadRunBody,
} from "../../contract/index.js";
import { ApiError } from "../../errors.js";
import { buildEvidence } from "../../runs/build-evidence.js";
import { IDEMPOTENCY_KEY, assertIdempotencyKey, createRun } from "../../runs/create-run.js";
import { uploadRun } from "../../runs/upload-run.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageThrough } from "../paging.js";
import { responses } from "../schemas.js";
import { listProjectFilter, visibleOr404 } from "../../auth/visibility.js";

const RunParams = z.strictObject({ run_id: ResourceId });

const keyOf = (request: FastifyRequest) => assertIdempotencyKey(request.headers["idempotency-key"]);

export function registerRunRoutes(api: Api, deps: ApiDeps) {
  const { store, cursors } = deps;

  /**
   * A route that makes a run under an Idempotency-Key: 201 with it, or 200 with the same run on a
   * replay (`Idempotent-Replayed: true`). The key is checked before the body, so a request without
   * one is told so whatever its body.
   */
  const createsRunIdempotently = <Body>(
    make: (principal: Principal, body: Body, idempotencyKey: string) => Promise<{ run: Run; replayed: boolean }>,
  ) => ({
    preValidation: async (request: FastifyRequest) => {
      keyOf(request);
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      // The body was validated against the route's schema (Body) before the handler runs.
      const { run, replayed } = await make(principalOf(request), request.body as Body, keyOf(request));
      reply.header("location", run.links.self);
      const linked = await deps.pages.linkRun(run);
      if (replayed) return reply.code(200).header("idempotent-replayed", "true").send(linked);
      return reply.code(201).send(linked);
    },
  });

  api.post("/v1/runs", {
    config: {
      scope: "runs:execute",
      creates: "run_id",
      location: true,
      errors: [
        "IDEMPOTENCY_KEY_REQUIRED",
        "IDEMPOTENCY_KEY_REUSED",
        "NOT_FOUND",
        "FORBIDDEN",
        "AGENT_URL_NOT_ALLOWED",
        "SOURCE_INCOMPLETE",
        "RUN_QUOTA_EXCEEDED",
        "ENVIRONMENT_NOT_READY",
      ],
    },
    schema: {
      operationId: "createRun",
      tags: ["runs"],
      summary: "Start a run of a test spec against an environment",
      description:
        "Requires an Idempotency-Key header. The first request answers 201; a replay of the same body within " +
        "the window answers 200 with the same run and `Idempotent-Replayed: true`; the same key with another body answers 422.",
      headers: z.looseObject({
        "idempotency-key": z
          .string()
          .regex(IDEMPOTENCY_KEY)
          .describe("Required: 1–255 printable ASCII characters, no spaces, unique per intended run"),
      }),
      body: CreateRunBody,
      response: responses({ 200: Run, 201: Run }),
    },
    ...createsRunIdempotently<CreateRunBody>((principal, body, key) => createRun(deps, principal, body, key)),
  });

  api.post("/v1/runs/uploads", {
    bodyLimit: deps.bodyLimits.spec,
    config: {
      scope: "runs:execute",
      creates: "run_id",
      location: true,
      errors: [
        "IDEMPOTENCY_KEY_REQUIRED",
        "IDEMPOTENCY_KEY_REUSED",
        "NOT_FOUND",
        "FORBIDDEN",
        "UPLOAD_CASES_MISMATCH",
        "UPLOAD_TURNS_MISMATCH",
        "UPLOAD_MOCKS_MISMATCH",
        "UPLOAD_TRACE_INVALID",
        "RUN_QUOTA_EXCEEDED",
      ],
    },
    schema: {
      operationId: "uploadRun",
      tags: ["runs"],
      summary: "Upload a run held outside the service, to be judged by it",
      description:
        "The conversations and trace of a run held elsewhere (`assure test --upload`), for a version of a test spec in an " +
        "environment: never evaluations or a verdict. They are checked against the spec version (its cases, turns and " +
        "mocks; a trace that is well-formed) and refused with 422 and nothing stored when they do not match; then the run " +
        "is stored with `executor: local` and `uploaded_by`, and judged by the service's own evaluators and judge. " +
        "Requires an Idempotency-Key header, as `POST /v1/runs`: a replay answers 200 with the same run and `Idempotent-Replayed: true`. " +
        "It counts toward a commit's release decision only where the base branch's policy allows runs executed outside the service.",
      headers: z.looseObject({
        "idempotency-key": z
          .string()
          .regex(IDEMPOTENCY_KEY)
          .describe("Required: 1–255 printable ASCII characters, no spaces, unique per intended upload"),
      }),
      body: UploadRunBody,
      response: responses({ 200: Run, 201: Run }),
    },
    ...createsRunIdempotently<UploadRunBody>((principal, body, key) => uploadRun(deps, principal, body, key)),
  });

  api.get("/v1/runs", {
    config: { scope: "runs:read", errors: ["NOT_FOUND", "PROJECT_ID_REQUIRED"] },
    schema: {
      operationId: "listRuns",
      tags: ["runs"],
      summary: "List runs, newest first (created_at, then run_id, descending)",
      querystring: ListRunsQuery,
      response: responses({ 200: RunList }),
    },
    handler: async (request) => {
      const principal = principalOf(request);
      const { query } = request;
      const project_id = listProjectFilter(principal, query.project_id);
      let environment_id: string | undefined;
      if (query.environment !== undefined) {
        environment_id = await resolveEnvironment(deps, project_id, query.environment);
      }
      const scope = `runs|${project_id ?? ""}|${query.status ?? ""}|${query.environment ?? ""}`;
      const page = await pageThrough(cursors, scope, query, (page) =>
        store.listRuns({ project_id, status: query.status, environment_id }, page),
      );
      return { ...page, data: await deps.pages.linkRuns(page.data) };
    },
  });

  api.get("/v1/runs/:run_id", {
    config: { scope: "runs:read" },
    schema: {
      operationId: "getRun",
      tags: ["runs"],
      summary: "Get a run",
      params: RunParams,
      response: responses({ 200: Run }),
    },
    handler: async (request) =>
      deps.pages.linkRun(
        visibleOr404(principalOf(request), await store.getRun(request.params.run_id), "Run", request.params.run_id),
      ),
  });

  api.get("/v1/runs/:run_id/evidence", {
    config: { scope: "evidence:read" },
    schema: {
      operationId: "getRunEvidence",
      tags: ["runs"],
      summary: "The evidence of a run: the complete decision chain for a release consumer",
      params: RunParams,
      response: responses({ 200: Evidence }),
    },
    handler: async (request) =>
      buildEvidence(
        store,
        visibleOr404(principalOf(request), await store.getRun(request.params.run_id), "Run", request.params.run_id),
      ),
  });
}

/**
 * The run list's `environment` filter takes an id or, within one project, a name. An unknown
 * one matches nothing rather than failing, as any other filter value would.
 */
async function resolveEnvironment({ store }: ApiDeps, projectId: string | undefined, value: string): Promise<string> {
  const byId = await store.getEnvironmentRow(value);
  if (byId && (projectId === undefined || byId.project_id === projectId)) return byId.environment_id;
  if (projectId !== undefined) {
    const byName = await store.getEnvironmentRowByName(projectId, value);
    if (byName) return byName.environment_id;
  } else if (!value.startsWith("env_")) {
    throw new ApiError("PROJECT_ID_REQUIRED", {
      message: "Filtering by environment name needs a project; pass project_id or an environment id.",
      details: [{ path: "query.environment", message: "a name is only unique within a project" }],
    });
  }
  return value;
}
