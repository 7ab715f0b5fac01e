import type { Db } from "./db.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";

/** The reads every table of a project's resources has: one row by its id, and pages of them, newest first, maybe of one project. */
export function makeProjectTable<Row extends { created_at: string }>(db: Db, listPage: ListPage, table: string, idColumn: string) {
  const byId = db.prepare(`SELECT * FROM ${table} WHERE ${idColumn} = ?`);
  return {
    get: (id: string): Row | undefined => byId.get(id) as Row | undefined,
    list: (filter: { project_id?: string | undefined }, page: PageRequest): RowPage<Row> =>
      listPage<Row>(table, idColumn, filter.project_id ? [["project_id = ?", filter.project_id]] : [], page),
  };
}
