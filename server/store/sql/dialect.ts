/**
 * The SQL the store's statements need where SQLite and PostgreSQL disagree, named by what it means.
 * Everything else the store writes once, in SQL both understand. JSON is kept as text in both; the
 * fragments that build JSON return it as text.
 *
 * A JSON path is written as SQLite writes it, `$.a.b` (object keys only). A fragment's arguments
 * are SQL expressions; a parameter given where JSON is read should be typed (`CAST(@x AS TEXT)`),
 * since PostgreSQL cannot deduce one type for a parameter used as text and as JSON. No fragment
 * holds `?` or `@`: the PostgreSQL driver reads them as parameters.
 */
export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /** The value at `path` of the JSON text `json`, to compare as text (a string's contents); NULL when missing or JSON null. */
  jsonText(json: string, path: string): string;
  /** The number at `path` of the JSON text `json`; NULL when missing or JSON null. */
  jsonNumber(json: string, path: string): string;
  /**
   * The type of the value at `path`, named as SQLite names it: 'null', 'true', 'false', 'integer',
   * 'real', 'text', 'array', 'object'; NULL when there is no such value.
   */
  jsonType(json: string, path: string): string;
  /** JSON text as a value to nest in `jsonObject` or `jsonObjectAgg` (not as a string). */
  json(text: string): string;
  /** A JSON object's text, from its keys and each value's SQL (a SQL value, or a nested JSON value). */
  jsonObject(fields: Readonly<Record<string, string>>): string;
  /** The JSON object's text aggregated from a group's rows (`{}` for none). */
  jsonObjectAgg(key: string, value: string): string;
  /** A query of the elements of a JSON array, as text, in column `value`: `x IN (${jsonArrayValues(@ids)})`. */
  jsonArrayValues(json: string): string;
  /** `bytes` random bytes (at most 16) as lower-case hex. */
  randomHex(bytes: number): string;
  /** A query of the names of the database's tables (the current schema's), in column `name`. */
  readonly tableNames: string;
  /**
   * Ends a claim's SELECT of the rows it takes: on PostgreSQL they are locked, and rows another
   * node's claim holds are skipped (without it, two claims pick the same row and both take it).
   * Empty on SQLite, whose one writer claims alone.
   */
  readonly skipLocked: string;
  /**
   * Ends a SELECT of rows the transaction relies on staying as read until it commits: on PostgreSQL
   * they are locked against updates (a concurrent one waits, or is waited for). Empty on SQLite,
   * whose one writer holds the whole database.
   */
  readonly lockShared: string;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The keys of a `$.a.b` path. */
function keysOf(path: string): string[] {
  const keys = path.split(".");
  if (keys.shift() !== "$" || keys.length === 0 || !keys.every((key) => KEY.test(key))) {
    throw new Error(`Unsupported JSON path ${path}: give object keys, as $.a.b`);
  }
  return keys;
}

const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** The path as SQLite reads it, once checked: a path that works on SQLite works on PostgreSQL too. */
const sqlitePath = (path: string) => (keysOf(path), sqlString(path));

const fieldsOf = (fields: Readonly<Record<string, string>>) =>
  Object.entries(fields)
    .map(([key, value]) => `${sqlString(key)}, ${value}`)
    .join(", ");

export const sqliteDialect: Dialect = {
  name: "sqlite",
  jsonText: (json, path) => `json_extract(${json}, ${sqlitePath(path)})`,
  jsonNumber: (json, path) => `json_extract(${json}, ${sqlitePath(path)})`,
  jsonType: (json, path) => `json_type(${json}, ${sqlitePath(path)})`,
  json: (text) => `json(${text})`,
  jsonObject: (fields) => `json_object(${fieldsOf(fields)})`,
  jsonObjectAgg: (key, value) => `json_group_object(${key}, ${value})`,
  jsonArrayValues: (json) => `SELECT value FROM json_each(${json})`,
  randomHex: (bytes) => `lower(hex(randomblob(${bytes})))`,
  tableNames: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  skipLocked: "",
  lockShared: "",
};

const jsonb = (json: string) => `CAST(${json} AS jsonb)`;
const pgPath = (path: string) => sqlString(`{${keysOf(path).join(",")}}`);

export const postgresDialect: Dialect = {
  name: "postgres",
  jsonText: (json, path) => `(${jsonb(json)} #>> ${pgPath(path)})`,
  jsonNumber: (json, path) => `CAST(${jsonb(json)} #>> ${pgPath(path)} AS double precision)`,
  jsonType(json, path) {
    const value = `${jsonb(json)} #> ${pgPath(path)}`;
    const text = `${jsonb(json)} #>> ${pgPath(path)}`;
    return `(CASE jsonb_typeof(${value}) WHEN 'string' THEN 'text' WHEN 'boolean' THEN ${text}
      WHEN 'number' THEN CASE WHEN ${text} ~ '^-{0,1}[0-9]+$' THEN 'integer' ELSE 'real' END ELSE jsonb_typeof(${value}) END)`;
  },
  json: (text) => jsonb(text),
  jsonObject: (fields) => `CAST(jsonb_build_object(${fieldsOf(fields)}) AS text)`,
  jsonObjectAgg: (key, value) => `CAST(COALESCE(jsonb_object_agg(${key}, ${value}), '{}') AS text)`,
  jsonArrayValues: (json) => `SELECT value FROM jsonb_array_elements_text(${jsonb(json)})`,
  randomHex(bytes) {
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > 16) {
      throw new Error(`randomHex gives 1 to 16 bytes, not ${bytes}`);
    }
    // gen_random_uuid is built in (no extension) and strongly random; md5 spreads its 122 random bits over every digit.
    return `substr(md5(CAST(gen_random_uuid() AS text)), 1, ${bytes * 2})`;
  },
  tableNames:
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  skipLocked: "FOR UPDATE SKIP LOCKED",
  lockShared: "FOR SHARE",
};
