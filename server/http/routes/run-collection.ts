import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { ResourceId, type Run } from "../../contract/index.js";
import { visibleOr404 } from "../../auth/visibility.js";
import { ApiError } from "../../errors.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageAfterKey } from "../paging.js";
import { responses } from "../schemas.js";

/**
 * A collection of a run's evidence (its conversations, evaluations, findings): a list in the
 * order the run made them, filtered by `filters` of the query and paged by id, and each item at
 * its own path. Both need evidence:read and answer 404 for a run the key may not see.
 */
export interface RunCollection<Row, Query extends { limit: number; cursor?: string | undefined }> {
  /** The path segment under the run, e.g. `evaluations`. */
  name: string;
  /** The path parameter of one item, e.g. `evaluation_id`. */
  idParam: string;
  /** What one item is called in a 404, e.g. `Evaluation`. */
  what: string;
  list: {
    operationId: string;
    summary: string;
    query: z.ZodType<Query>;
    response: z.ZodType;
    /** The rows after the id `after` (ascending), at most `limit`, that match the query's filters. */
    rows(runId: string, query: Query, after: string | undefined, limit: number): Promise<Row[]>;
    /** The query's filters, in a fixed order: the cursor is bound to them. */
    filters(query: Query): (string | undefined)[];
    idOf(row: Row): string;
    toItem(row: Row): unknown;
  };
  get: {
    operationId: string;
    summary: string;
    response: z.ZodType;
    row(runId: string, id: string): Promise<Row | undefined>;
    /** May read more of the store (a conversation's messages). */
    toItem(row: Row): unknown;
  };
}

export function makeRunLookup({ store }: Pick<ApiDeps, "store">) {
  return async (request: FastifyRequest, runId: string): Promise<Run> =>
    visibleOr404(principalOf(request), await store.getRun(runId), "Run", runId);
}

export function registerRunCollection<Row, Query extends { limit: number; cursor?: string | undefined }>(
  api: Api,
  deps: Pick<ApiDeps, "store" | "cursors">,
  { name, idParam, what, list, get }: RunCollection<Row, Query>,
): void {
  const visibleRun = makeRunLookup(deps);
  const config = { scope: "evidence:read" as const };

  api.get(`/v1/runs/:run_id/${name}`, {
    config,
    schema: {
      operationId: list.operationId,
      tags: ["evidence"],
      summary: list.summary,
      params: z.strictObject({ run_id: ResourceId }),
      querystring: list.query,
      response: responses({ 200: list.response }),
    },
    handler: async (request) => {
      const run = await visibleRun(request, request.params.run_id);
      const query = request.query as Query;
      return pageAfterKey(
        deps.cursors,
        [name, run.run_id, ...list.filters(query).map((value) => value ?? "")].join("|"),
        query,
        (after, limit) => list.rows(run.run_id, query, after, limit),
        list.idOf,
        list.toItem,
      );
    },
  });

  api.get(`/v1/runs/:run_id/${name}/:${idParam}`, {
    config,
    schema: {
      operationId: get.operationId,
      tags: ["evidence"],
      summary: get.summary,
      params: z.strictObject({ run_id: ResourceId, [idParam]: ResourceId }),
      response: responses({ 200: get.response }),
    },
    handler: async (request) => {
      const params = request.params as Record<string, string>;
      const run = await visibleRun(request, params.run_id!);
      const row = await get.row(run.run_id, params[idParam]!);
      if (row === undefined) {
        throw new ApiError("NOT_FOUND", { message: `${what} '${params[idParam]}' was not found.` });
      }
      return get.toItem(row);
    },
  });
}
