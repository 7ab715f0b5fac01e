import type { Page } from "../contract/index.js";
import type { PageRequest, RowPage } from "../store/index.js";
import type { CursorCodec } from "./cursor.js";

/**
 * A list route's paging in one place: the cursor is decoded for, and re-issued for, the same
 * scope (list name + filters), so it cannot be replayed against other filters.
 */
export async function pageThrough<T>(
  cursors: CursorCodec,
  scope: string,
  query: { limit: number; cursor?: string | undefined },
  list: (page: PageRequest) => Promise<RowPage<T>>,
): Promise<Page<T>> {
  const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, scope);
  const { rows, next } = await list({ limit: query.limit, after });
  return { data: rows, next_cursor: next ? cursors.encode(next, scope) : null, has_more: next !== undefined };
}

/**
 * Paging for a run's sub-collections, which are ordered by an ascending key (an id or a
 * sequence number): `fetch(after, limit + 1)` returns rows after the key, the extra row telling
 * whether more follow. The cursor carries the last key, signed and bound to `scope`.
 */
export async function pageAfterKey<Row, Item>(
  cursors: CursorCodec,
  scope: string,
  query: { limit: number; cursor?: string | undefined },
  fetch: (after: string | undefined, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => string,
  toItem: (row: Row) => Item,
  firstAfter?: string,
): Promise<Page<Item>> {
  const after = query.cursor === undefined ? firstAfter : cursors.decode(query.cursor, scope).id;
  const rows = await fetch(after, query.limit + 1);
  const hasMore = rows.length > query.limit;
  if (hasMore) rows.length = query.limit;
  return {
    data: rows.map(toItem),
    next_cursor: hasMore ? cursors.encode({ created_at: "", id: keyOf(rows.at(-1)!) }, scope) : null,
    has_more: hasMore,
  };
}
