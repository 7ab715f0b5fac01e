import { z } from "zod";
import { ProjectScopedPageQuery, ResourceId, type Page } from "../../contract/index.js";
import type { Scope } from "../../auth/scopes.js";
import { listProjectFilter, visibleOr404 } from "../../auth/visibility.js";
import type { PageRequest, RowPage } from "../../store/index.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageThrough } from "../paging.js";
import { responses } from "../schemas.js";

/**
 * How a resource that belongs to a project is read: a list, newest first, of what the key's
 * project may see (an admin key may filter by project), and each item at its own path (404 for
 * another project's, as for a missing one).
 */
export interface ProjectResource<Row extends { project_id: string }, Item> {
  /** The collection's path, e.g. `/v1/agents`. */
  path: string;
  tag: string;
  scope: Scope;
  list: {
    operationId: string;
    summary: string;
    response: z.ZodType;
    items(filter: { project_id: string | undefined }, page: PageRequest): RowPage<Item>;
  };
  /** Left out when the item's route reads more than its id. */
  get?: {
    operationId: string;
    summary: string;
    /** The path parameter, e.g. `agent_id`. */
    idParam: string;
    /** What it is called in a 404, e.g. `Agent`. */
    what: string;
    response: z.ZodType;
    row(id: string): Row | undefined;
    toItem(row: Row): Item;
  };
}

export function registerProjectResource<Row extends { project_id: string }, Item>(
  api: Api,
  { cursors }: Pick<ApiDeps, "cursors">,
  { path, tag, scope, list, get }: ProjectResource<Row, Item>,
): void {
  api.get(path, {
    config: { scope },
    schema: {
      operationId: list.operationId,
      tags: [tag],
      summary: list.summary,
      querystring: ProjectScopedPageQuery,
      response: responses({ 200: list.response }),
    },
    handler: async (request): Promise<Page<Item>> => {
      const project_id = listProjectFilter(principalOf(request), request.query.project_id);
      return pageThrough(cursors, `${tag}|${project_id ?? ""}`, request.query, (page) => list.items({ project_id }, page));
    },
  });

  if (!get) return;
  api.get(`${path}/:${get.idParam}`, {
    config: { scope },
    schema: {
      operationId: get.operationId,
      tags: [tag],
      summary: get.summary,
      params: z.strictObject({ [get.idParam]: ResourceId }),
      response: responses({ 200: get.response }),
    },
    handler: async (request) => {
      const id = (request.params as Record<string, string>)[get.idParam]!;
      return get.toItem(visibleOr404(principalOf(request), get.row(id), get.what, id));
    },
  });
}
