import { parse as parseCsv } from "csv-parse/sync";
import type { VarsRow } from "./vars.js";
import { MAX_CONVERSATIONS_PER_SPEC } from "./vars.js";
import { MAX_NESTING, jsonNestingBeyond } from "./nesting.js";

/** Columns a table may have, and characters a row may take: reading stops at either. */
export const MAX_TABLE_COLUMNS = 200;
export const MAX_ROW_CHARACTERS = 1024 * 1024;

/** A scenario's table read from its file: its rows, and the line each row starts on. */
export type TableRead =
  { ok: true; rows: VarsRow[]; lines: number[] } | { ok: false; problems: { line: number; message: string }[] };

const MAX_PROBLEMS = 20;

/**
 * Reads a table file: CSV (RFC 4180; a header row names the columns; every value is text) or
 * JSONL (one JSON object per line; values keep their JSON types). Problems name the line. Reading
 * stops at the caps (one row past the most a spec takes, a row's characters, the columns): a
 * hostile file costs no more than an allowed one.
 */
export function readTable(path: string, bytes: Buffer): TableRead {
  if (path.endsWith(".jsonl")) return readJsonLines(bytes.toString("utf8"));
  return readCsv(bytes.toString("utf8"));
}

function readCsv(text: string): TableRead {
  const problems: { line: number; message: string }[] = [];
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parseCsv(text, {
      bom: true,
      info: true,
      skip_empty_lines: true,
      to: MAX_CONVERSATIONS_PER_SPEC + 1,
      max_record_size: MAX_ROW_CHARACTERS,
      columns: (header: string[]) => {
        if (header.length > MAX_TABLE_COLUMNS) {
          problems.push({
            line: 1,
            message: `the header row names ${header.length} columns; at most ${MAX_TABLE_COLUMNS}`,
          });
          return header.slice(0, MAX_TABLE_COLUMNS);
        }
        const seen = new Set<string>();
        header.forEach((name, i) => {
          if (name.trim() === "") problems.push({ line: 1, message: `column ${i + 1} has no name in the header row` });
          else if (seen.has(name)) {
            problems.push({ line: 1, message: `column '${name}' appears twice in the header row` });
          }
          seen.add(name);
        });
        return header;
      },
    }) as unknown as typeof records;
  } catch (error) {
    const { message, lines, code } = error as { message: string; lines?: number; code?: string };
    const said =
      code === "CSV_MAX_RECORD_SIZE"
        ? `a row is longer than ${MAX_ROW_CHARACTERS} characters`
        : message.replace(/^Invalid Record Length: /, "");
    return { ok: false, problems: [...problems, { line: lines ?? 1, message: said }] };
  }
  if (problems.length > 0) return { ok: false, problems };
  return tableOf(
    records.map(({ record }) => record),
    records.map((_, i) => (i === 0 ? 2 : records[i - 1]!.info.lines + 1)),
  );
}

function readJsonLines(text: string): TableRead {
  const rows: VarsRow[] = [];
  const lines: number[] = [];
  const problems: { line: number; message: string }[] = [];
  const problem = (line: number, message: string) => problems.push({ line, message });
  const body = text.replace(/^\uFEFF/, "");
  // One line at a time, and no further than a row past the most a spec takes.
  for (
    let start = 0, i = 0;
    start < body.length && problems.length < MAX_PROBLEMS && rows.length <= MAX_CONVERSATIONS_PER_SPEC;
    i++
  ) {
    const end = body.indexOf("\n", start);
    const content = body.slice(start, end === -1 ? body.length : end).replace(/\r$/, "");
    start = end === -1 ? body.length : end + 1;
    if (content.trim() === "") continue;
    if (content.length > MAX_ROW_CHARACTERS) {
      problem(i + 1, `the line is longer than ${MAX_ROW_CHARACTERS} characters`);
      continue;
    }
    if (jsonNestingBeyond(content, MAX_NESTING) !== undefined) {
      problem(i + 1, `the row nests deeper than ${MAX_NESTING} levels`);
      continue;
    }
    try {
      const value: unknown = JSON.parse(content);
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        problem(i + 1, "each line is a JSON object: one row, its keys the columns");
      } else if (Object.keys(value).length > MAX_TABLE_COLUMNS) {
        problem(i + 1, `the row has ${Object.keys(value).length} columns; at most ${MAX_TABLE_COLUMNS}`);
      } else {
        rows.push(value as VarsRow);
        lines.push(i + 1);
      }
    } catch (error) {
      problem(i + 1, `not JSON: ${(error as Error).message}`);
    }
  }
  return problems.length > 0 ? { ok: false, problems } : tableOf(rows, lines);
}

function tableOf(rows: VarsRow[], lines: number[]): TableRead {
  if (rows.length === 0) return { ok: false, problems: [{ line: 1, message: "the table has no rows" }] };
  if (rows.length > MAX_CONVERSATIONS_PER_SPEC) {
    return {
      ok: false,
      problems: [
        {
          line: lines[MAX_CONVERSATIONS_PER_SPEC]!,
          message: `the table has more than ${MAX_CONVERSATIONS_PER_SPEC} rows; at most ${MAX_CONVERSATIONS_PER_SPEC}`,
        },
      ],
    };
  }
  return { ok: true, rows, lines };
}
