import type { Sql } from "./sql/sql.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";

/**
 * The reads every table of a project's resources has: one row by its id, and pages of them,
 * newest first, maybe of one project; each row as `toItem` makes it.
 */
export function makeProjectTable<Row extends { created_at: string }, Item = Row>(
  db: Sql,
  listPage: ListPage,
  table: string,
  idColumn: string,
  toItem: (row: Row) => Item = (row) => row as unknown as Item,
) {
  const byId = db.prepare(`SELECT * FROM ${table} WHERE ${idColumn} = ?`);
  return {
    get: async (id: string): Promise<Item | undefined> => {
      const row = await byId.get<Row>(id);
      return row && toItem(row);
    },
    list: async (filter: { project_id?: string | undefined }, page: PageRequest): Promise<RowPage<Item>> => {
      const { rows, next } = await listPage<Row>(
        table,
        idColumn,
        filter.project_id ? [["project_id = ?", filter.project_id]] : [],
        page,
      );
      return { rows: rows.map(toItem), next };
    },
  };
}
