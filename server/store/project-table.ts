import type { Db } from "./db.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";

/**
 * The reads every table of a project's resources has: one row by its id, and pages of them,
 * newest first, maybe of one project; each row as `toItem` makes it.
 */
export function makeProjectTable<Row extends { created_at: string }, Item = Row>(
  db: Db,
  listPage: ListPage,
  table: string,
  idColumn: string,
  toItem: (row: Row) => Item = (row) => row as unknown as Item,
) {
  const byId = db.prepare(`SELECT * FROM ${table} WHERE ${idColumn} = ?`);
  return {
    get: (id: string): Item | undefined => {
      const row = byId.get(id) as Row | undefined;
      return row && toItem(row);
    },
    list: (filter: { project_id?: string | undefined }, page: PageRequest): RowPage<Item> => {
      const { rows, next } = listPage<Row>(
        table,
        idColumn,
        filter.project_id ? [["project_id = ?", filter.project_id]] : [],
        page,
      );
      return { rows: rows.map(toItem), next };
    },
  };
}
