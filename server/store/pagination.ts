import type { Sql, SqlStatement } from "./sql/sql.js";

/** The position after which the next page starts: lists are ordered newest first. */
export interface Keyset {
  created_at: string;
  id: string;
}

export interface PageRequest {
  limit: number;
  after: Keyset | undefined;
}

export interface RowPage<Row> {
  rows: Row[];
  /** Where the next page starts; undefined on the last page. */
  next: Keyset | undefined;
}

export type Filter = readonly [clause: string, value: unknown];

/**
 * Keyset pagination over `created_at DESC, <id> DESC`: every page is one index range scan, so
 * page 1,000 costs what page 1 costs. Statements are prepared once per filter combination.
 */
export function makePager(db: Sql) {
  const statements = new Map<string, SqlStatement>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

  return async function listPage<Row extends { created_at: string }>(
    table: string,
    idColumn: string,
    filters: readonly Filter[],
    { limit, after }: PageRequest,
  ): Promise<RowPage<Row>> {
    const clauses = filters.map(([clause]) => clause);
    const params = filters.map(([, value]) => value);
    if (after) {
      clauses.push(`(created_at, ${idColumn}) < (?, ?)`);
      params.push(after.created_at, after.id);
    }
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    const sql = `SELECT * FROM ${table} ${where} ORDER BY created_at DESC, ${idColumn} DESC LIMIT ?`;
    const rows = await prepare(sql).all<Row>([...params, limit + 1]);
    const hasMore = rows.length > limit;
    if (hasMore) rows.length = limit;
    const last = rows.at(-1) as (Row & Record<string, unknown>) | undefined;
    return {
      rows,
      next: hasMore && last ? { created_at: last.created_at, id: String(last[idColumn]) } : undefined,
    };
  };
}

export type ListPage = ReturnType<typeof makePager>;
