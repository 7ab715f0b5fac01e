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
 * another project's, as for a missing one). Its paths, operation ids and summaries follow from
 * its name: `test-spec` is listed at `/v1/test-specs` (`listTestSpecs`) and read at
 * `/v1/test-specs/{test_spec_id}` (`getTestSpec`).
 */
export interface ProjectResource<Row extends { project_id: string }, Item> {
  /** Kebab-case and singular, e.g. `agent`, `test-spec`. */
  name: string;
  scope: Scope;
  list: {
    response: z.ZodType;
    items(filter: { project_id: string | undefined }, page: PageRequest): Promise<RowPage<Item>>;
  };
  /** Left out when the item's route reads more than its id. */
  get?: { response: z.ZodType; row(id: string): Promise<Row | undefined>; toItem(row: Row): Item; note?: string };
}

export function registerProjectResource<Row extends { project_id: string }, Item>(
  api: Api,
  { cursors }: Pick<ApiDeps, "cursors">,
  { name, scope, list, get }: ProjectResource<Row, Item>,
): void {
  const tag = `${name}s`;
  const words = name.replaceAll("-", " ");
  const pascal = name.replace(/(^|-)(\w)/g, (_, _dash, letter: string) => letter.toUpperCase());
  const path = `/v1/${tag}`;

  api.get(path, {
    config: { scope, errors: ["NOT_FOUND"] },
    schema: {
      operationId: `list${pascal}s`,
      tags: [tag],
      summary: `List ${words}s, newest first`,
      querystring: ProjectScopedPageQuery,
      response: responses({ 200: list.response }),
    },
    handler: async (request): Promise<Page<Item>> => {
      const project_id = listProjectFilter(principalOf(request), request.query.project_id);
      return pageThrough(cursors, `${tag}|${project_id ?? ""}`, request.query, (page) =>
        list.items({ project_id }, page),
      );
    },
  });

  if (!get) return;
  const idParam = `${name.replaceAll("-", "_")}_id`;
  const what = `${words[0]!.toUpperCase()}${words.slice(1)}`;
  api.get(`${path}/:${idParam}`, {
    config: { scope },
    schema: {
      operationId: `get${pascal}`,
      tags: [tag],
      summary: `Get ${/^[aeiou]/.test(words) ? "an" : "a"} ${words}${get.note ? ` (${get.note})` : ""}`,
      params: z.strictObject({ [idParam]: ResourceId }),
      response: responses({ 200: get.response }),
    },
    handler: async (request) => {
      const id = (request.params as Record<string, string>)[idParam]!;
      return get.toItem(visibleOr404(principalOf(request), await get.row(id), what, id));
    },
  });
}
