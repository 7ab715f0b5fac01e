import type { Db } from "../db.js";

/** One table of the SQLite database, as the copy reads and writes it. */
export interface CopiedTable {
  name: string;
  /** Every column, in the table's order. */
  columns: string[];
  /** The order rows are compared in: the primary key, or every column for a table without one. */
  orderColumns: string[];
  /** The columns of a foreign key to the table itself (waivers.revokes): its rows go in generations. */
  selfReference: { from: string[]; to: string[] } | undefined;
}

interface ColumnInfo {
  name: string;
  pk: number;
}

interface ForeignKeyInfo {
  id: number;
  table: string;
  from: string;
  to: string | null;
}

/** A quoted identifier, for names read from the schema. */
export const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The database's own tables (not SQLite's), ordered so that every table comes after the tables its
 * foreign keys reference (read from `pragma foreign_key_list`), ties in name order.
 */
export function tablesInForeignKeyOrder(db: Db): CopiedTable[] {
  const names = db
    .prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )
    .pluck()
    .all() as string[];
  const references = new Map<string, Set<string>>();
  const tables = new Map<string, CopiedTable>();
  for (const name of names) {
    const columns = db.prepare(`SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`).all(name) as ColumnInfo[];
    const primaryKey = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    const foreignKeys = db
      .prepare(`SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`)
      .all(name) as ForeignKeyInfo[];
    references.set(name, new Set(foreignKeys.map((fk) => fk.table).filter((table) => table !== name)));
    const self = foreignKeys.filter((fk) => fk.table === name);
    // Generations are counted along one foreign key; the schema has no table with two to itself.
    if (new Set(self.map((fk) => fk.id)).size > 1) {
      throw new Error(`Table ${name} has more than one foreign key to itself: the copy cannot order its rows.`);
    }
    tables.set(name, {
      name,
      columns: columns.map((c) => c.name),
      orderColumns: (primaryKey.length > 0 ? primaryKey : columns).map((c) => c.name),
      selfReference:
        self.length === 0
          ? undefined
          : {
              from: self.map((fk) => fk.from),
              // A foreign key without its columns named references the primary key.
              to: self.map((fk, i) => fk.to ?? primaryKey[i]!.name),
            },
    });
  }
  const ordered: CopiedTable[] = [];
  const placed = new Set<string>();
  while (ordered.length < names.length) {
    const next = names.find(
      (name) => !placed.has(name) && [...references.get(name)!].every((table) => placed.has(table)),
    );
    if (next === undefined) {
      const left = names.filter((name) => !placed.has(name));
      throw new Error(`The foreign keys of ${left.join(", ")} form a cycle (or reference a missing table).`);
    }
    placed.add(next);
    ordered.push(tables.get(next)!);
  }
  return ordered;
}

/** ORDER BY the table's comparison order, NULLs first on both databases (SQLite's default). */
export const orderBy = (table: CopiedTable) =>
  `ORDER BY ${table.orderColumns.map((c) => `${quoted(c)} ASC NULLS FIRST`).join(", ")}`;

/**
 * The SELECT that reads a table's rows in the order they can be inserted: the comparison order, but
 * for a table referencing itself, generation by generation (rows referencing nothing first, then
 * the rows that reference them, …), so a referenced row is always inserted first.
 */
export function insertOrderSelect(table: CopiedTable): string {
  const columns = table.columns.map(quoted).join(", ");
  if (!table.selfReference) return `SELECT ${columns} FROM ${quoted(table.name)} ${orderBy(table)}`;
  const { from, to } = table.selfReference;
  const name = quoted(table.name);
  const isRoot = from.map((c) => `${quoted(c)} IS NULL`).join(" OR ");
  const joins = from.map((c, i) => `child.${quoted(c)} = parent.${quoted(to[i]!)}`).join(" AND ");
  return `WITH RECURSIVE generation (row, depth) AS (
      SELECT rowid, 0 FROM ${name} WHERE ${isRoot}
      UNION ALL
      SELECT child.rowid, generation.depth + 1
      FROM generation JOIN ${name} AS parent ON parent.rowid = generation.row JOIN ${name} AS child ON ${joins}
    )
    SELECT ${table.columns.map((c) => `${name}.${quoted(c)}`).join(", ")}
    FROM ${name} JOIN generation ON generation.row = ${name}.rowid
    ORDER BY generation.depth, ${table.orderColumns.map((c) => `${name}.${quoted(c)} ASC NULLS FIRST`).join(", ")}`;
}
