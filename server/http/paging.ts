import type { Page } from "../contract/index.js";
import type { PageRequest, RowPage } from "../store/index.js";
import type { CursorCodec } from "./cursor.js";

/**
 * A list route's paging in one place: the cursor is decoded for, and re-issued for, the same
 * scope (list name + filters), so it cannot be replayed against other filters.
 */
export function pageThrough<T>(
  cursors: CursorCodec,
  scope: string,
  query: { limit: number; cursor?: string | undefined },
  list: (page: PageRequest) => RowPage<T>,
): Page<T> {
  const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, scope);
  const { rows, next } = list({ limit: query.limit, after });
  return { data: rows, next_cursor: next ? cursors.encode(next, scope) : null, has_more: next !== undefined };
}
