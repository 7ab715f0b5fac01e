import type pg from "pg";
import type { Db } from "../../server/store/db.js";

/**
 * A schema as both databases can describe it, aspect by aspect, in words a failing diff reads well:
 * a column is "name bigint NOT NULL DEFAULT 0", an index "table (a, b DESC) WHERE …". Keyed by table
 * (or index, or view) name.
 */
export interface SchemaShape {
  columns: Record<string, string[]>;
  primaryKeys: Record<string, string[]>;
  /** Column sets that are unique: UNIQUE constraints and unique indexes, with the WHERE of a partial one. */
  uniques: Record<string, string[]>;
  /** The indexes created by name (not those of a PRIMARY KEY or UNIQUE constraint). */
  indexes: Record<string, string>;
  foreignKeys: Record<string, string[]>;
  checkCount: Record<string, number>;
  views: Record<string, string[]>;
  /** INSERT, UPDATE and DELETE triggers ("name BEFORE UPDATE"): PostgreSQL's TRUNCATE triggers are its own. */
  triggers: Record<string, string[]>;
}

export const SCHEMA_ASPECTS = [
  "columns",
  "primaryKeys",
  "uniques",
  "indexes",
  "foreignKeys",
  "checkCount",
  "views",
  "triggers",
] as const satisfies readonly (keyof SchemaShape)[];

const POSTGRES_TYPE_OF_SQLITE: Record<string, string> = {
  TEXT: "text",
  INTEGER: "bigint",
  REAL: "double precision",
  BLOB: "bytea",
};

/** An expression as both print it: PostgreSQL's casts and enclosing parentheses dropped, spaces collapsed. */
const normalized = (expression: string) => {
  let text = expression
    .replace(/::[a-z ]+(\[\])?/g, "")
    .replace(/\s+/g, " ")
    .trim();
  while (text.startsWith("(") && text.endsWith(")")) text = text.slice(1, -1).trim();
  return text;
};

const columnText = (name: string, type: string, nullable: boolean, fallback: string | null) =>
  `${name} ${type}${nullable ? "" : " NOT NULL"}${fallback === null ? "" : ` DEFAULT ${normalized(fallback)}`}`;

const indexText = (table: string, unique: boolean, columns: string[], predicate: string | null) =>
  `${unique ? "UNIQUE " : ""}${table} (${columns.join(", ")})${predicate === null ? "" : ` WHERE ${normalized(predicate)}`}`;

const foreignKeyText = (columns: string[], table: string, to: string[], onDelete: string, onUpdate: string) =>
  `(${columns.join(", ")}) REFERENCES ${table} (${to.join(", ")}) ON DELETE ${onDelete} ON UPDATE ${onUpdate}`;

function emptyShape(): SchemaShape {
  return {
    columns: {},
    primaryKeys: {},
    uniques: {},
    indexes: {},
    foreignKeys: {},
    checkCount: {},
    views: {},
    triggers: {},
  };
}

/** Every table gets an entry in each per-table aspect, empty when it has none, and lists are sorted. */
function settled(shape: SchemaShape): SchemaShape {
  for (const table of Object.keys(shape.columns)) {
    for (const aspect of ["primaryKeys", "uniques", "foreignKeys", "triggers"] as const) {
      shape[aspect][table] ??= [];
      if (aspect !== "primaryKeys") shape[aspect][table].sort();
    }
    shape.checkCount[table] ??= 0;
  }
  return shape;
}

interface SqliteColumn {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

/** The shape of a SQLite database, read from sqlite_schema and the table pragmas. */
export function describeSqliteSchema(db: Db): SchemaShape {
  const shape = emptyShape();
  const objects = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
  const sqlOf = new Map(objects.map((object) => [object.name, object.sql ?? ""]));
  for (const { type, name, tbl_name, sql } of objects) {
    if (type === "view") {
      shape.views[name] = (db.pragma(`table_info("${name}")`) as SqliteColumn[]).map((column) => column.name);
    } else if (type === "trigger") {
      const [, timing, event] = /\b(BEFORE|AFTER|INSTEAD OF)\s+(INSERT|UPDATE|DELETE)\b/i.exec(sql ?? "") ?? [];
      (shape.triggers[tbl_name] ??= []).push(`${name} ${timing?.toUpperCase()} ${event?.toUpperCase()}`);
    } else if (type === "table") {
      describeSqliteTable(db, name, sql ?? "", sqlOf, shape);
    }
  }
  return settled(shape);
}

function describeSqliteTable(db: Db, table: string, sql: string, sqlOf: Map<string, string>, shape: SchemaShape) {
  const columns = db.pragma(`table_info("${table}")`) as SqliteColumn[];
  // A primary key column never holds NULL: a STRICT table refuses it, and an INTEGER PRIMARY KEY is the
  // rowid (given NULL, SQLite picks the next one), though table_info does not say NOT NULL of it.
  shape.columns[table] = columns.map((c) =>
    columnText(c.name, POSTGRES_TYPE_OF_SQLITE[c.type] ?? c.type, c.notnull === 0 && c.pk === 0, c.dflt_value),
  );
  shape.primaryKeys[table] = columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  shape.checkCount[table] = sql.match(/\bCHECK\s*\(/gi)?.length ?? 0;

  const indexes = db.pragma(`index_list("${table}")`) as {
    name: string;
    unique: number;
    origin: "c" | "u" | "pk";
    partial: number;
  }[];
  for (const index of indexes) {
    if (index.origin === "pk") continue;
    const keyColumns = (
      db.pragma(`index_xinfo("${index.name}")`) as { name: string; desc: number; key: number }[]
    ).filter((column) => column.key === 1);
    const predicate = index.partial ? (/\bWHERE\s+([\s\S]+)$/i.exec(sqlOf.get(index.name) ?? "")?.[1] ?? "?") : null;
    const columnNames = keyColumns.map((column) => column.name);
    if (index.unique) (shape.uniques[table] ??= []).push(indexText("", true, columnNames, predicate).trim());
    if (index.origin === "c") {
      const ordered = keyColumns.map((column) => `${column.name}${column.desc ? " DESC" : ""}`);
      shape.indexes[index.name] = indexText(table, index.unique === 1, ordered, predicate);
    }
  }

  const references = db.pragma(`foreign_key_list("${table}")`) as {
    id: number;
    table: string;
    from: string;
    to: string;
    on_update: string;
    on_delete: string;
  }[];
  const byId = new Map<number, typeof references>();
  for (const reference of references) byId.set(reference.id, [...(byId.get(reference.id) ?? []), reference]);
  for (const parts of byId.values()) {
    const [first] = parts;
    if (first === undefined) continue;
    (shape.foreignKeys[table] ??= []).push(
      foreignKeyText(
        parts.map((part) => part.from),
        first.table,
        parts.map((part) => part.to),
        first.on_delete,
        first.on_update,
      ),
    );
  }
}

const ACTION_OF_POSTGRES_CODE: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

/** The shape of the PostgreSQL database's current schema, read from information_schema and pg_catalog. */
export async function describePostgresSchema(client: pg.ClientBase): Promise<SchemaShape> {
  const shape = emptyShape();
  const columns = await client.query<{
    table_name: string;
    table_type: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>(`SELECT c.table_name, t.table_type, c.column_name, c.data_type, c.is_nullable, c.column_default
      FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema()
      ORDER BY c.table_name, c.ordinal_position`);
  for (const c of columns.rows) {
    if (c.table_type === "VIEW") {
      (shape.views[c.table_name] ??= []).push(c.column_name);
    } else {
      const column = columnText(c.column_name, c.data_type, c.is_nullable === "YES", c.column_default);
      (shape.columns[c.table_name] ??= []).push(column);
    }
  }

  const indexes = await client.query<{
    table_name: string;
    index_name: string;
    is_unique: boolean;
    is_primary: boolean;
    backs_constraint: boolean;
    predicate: string | null;
    key_columns: string[];
    ordered_columns: string[];
  }>(`SELECT t.relname AS table_name, x.relname AS index_name, i.indisunique AS is_unique,
             i.indisprimary AS is_primary,
             EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u'))
               AS backs_constraint,
             pg_get_expr(i.indpred, i.indrelid) AS predicate,
             ARRAY(SELECT a.attname::text
                   FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                   ORDER BY k.n) AS key_columns,
             ARRAY(SELECT a.attname::text || CASE WHEN i.indoption[(k.n - 1)::int] & 1 = 1 THEN ' DESC' ELSE '' END
                   FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                   ORDER BY k.n) AS ordered_columns
      FROM pg_index i
      JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_class x ON x.oid = i.indexrelid
      WHERE t.relnamespace = current_schema()::regnamespace`);
  for (const index of indexes.rows) {
    if (index.is_primary) {
      shape.primaryKeys[index.table_name] = index.key_columns;
      continue;
    }
    if (index.is_unique) {
      (shape.uniques[index.table_name] ??= []).push(indexText("", true, index.key_columns, index.predicate).trim());
    }
    if (!index.backs_constraint) {
      shape.indexes[index.index_name] = indexText(
        index.table_name,
        index.is_unique,
        index.ordered_columns,
        index.predicate,
      );
    }
  }

  const constraints = await client.query<{
    table_name: string;
    type: string;
    referenced_table: string | null;
    key_columns: string[];
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
  }>(`SELECT t.relname AS table_name, k.contype AS type, f.relname AS referenced_table,
             ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS c(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = c.attnum ORDER BY c.n)
               AS key_columns,
             ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY AS c(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = c.attnum ORDER BY c.n)
               AS referenced_columns,
             k.confdeltype AS on_delete, k.confupdtype AS on_update
      FROM pg_constraint k
      JOIN pg_class t ON t.oid = k.conrelid
      LEFT JOIN pg_class f ON f.oid = k.confrelid
      WHERE t.relnamespace = current_schema()::regnamespace AND k.contype IN ('c', 'f')`);
  for (const constraint of constraints.rows) {
    if (constraint.type === "c") {
      shape.checkCount[constraint.table_name] = (shape.checkCount[constraint.table_name] ?? 0) + 1;
    } else {
      (shape.foreignKeys[constraint.table_name] ??= []).push(
        foreignKeyText(
          constraint.key_columns,
          constraint.referenced_table ?? "?",
          constraint.referenced_columns,
          ACTION_OF_POSTGRES_CODE[constraint.on_delete] ?? constraint.on_delete,
          ACTION_OF_POSTGRES_CODE[constraint.on_update] ?? constraint.on_update,
        ),
      );
    }
  }

  // information_schema.triggers lists INSERT, UPDATE and DELETE triggers, one row per event.
  const triggers = await client.query<{ table_name: string; trigger_name: string; timing: string; event: string }>(
    `SELECT event_object_table AS table_name, trigger_name, action_timing AS timing, event_manipulation AS event
     FROM information_schema.triggers WHERE trigger_schema = current_schema()`,
  );
  for (const trigger of triggers.rows) {
    (shape.triggers[trigger.table_name] ??= []).push(`${trigger.trigger_name} ${trigger.timing} ${trigger.event}`);
  }
  return settled(shape);
}
