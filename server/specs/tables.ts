import { parse as parseCsv } from "csv-parse/sync";
import type { VarsRow } from "./vars.js";
import { MAX_CONVERSATIONS_PER_SPEC } from "./vars.js";

/** A scenario's table read from its file: its rows, and the line each row starts on. */
export type TableRead = { ok: true; rows: VarsRow[]; lines: number[] } | { ok: false; problems: { line: number; message: string }[] };

const MAX_PROBLEMS = 20;

/**
 * Reads a table file: CSV (RFC 4180; a header row names the columns; every value is text) or
 * JSONL (one JSON object per line; values keep their JSON types). Problems name the line.
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
      columns: (header: string[]) => {
        const seen = new Set<string>();
        header.forEach((name, i) => {
          if (name.trim() === "") problems.push({ line: 1, message: `column ${i + 1} has no name in the header row` });
          else if (seen.has(name)) problems.push({ line: 1, message: `column '${name}' appears twice in the header row` });
          seen.add(name);
        });
        return header;
      },
    }) as unknown as typeof records;
  } catch (error) {
    const { message, lines } = error as { message: string; lines?: number };
    return { ok: false, problems: [...problems, { line: lines ?? 1, message: message.replace(/^Invalid Record Length: /, "") }] };
  }
  if (problems.length > 0) return { ok: false, problems };
  return tableOf(records.map(({ record }) => record), records.map((_, i) => (i === 0 ? 2 : records[i - 1]!.info.lines + 1)));
}

function readJsonLines(text: string): TableRead {
  const rows: VarsRow[] = [];
  const lines: number[] = [];
  const problems: { line: number; message: string }[] = [];
  text.replace(/^\uFEFF/, "").split(/\r?\n/).forEach((content, i) => {
    if (content.trim() === "" || problems.length >= MAX_PROBLEMS) return;
    try {
      const value: unknown = JSON.parse(content);
      if (value === null || typeof value !== "object" || Array.isArray(value)) problems.push({ line: i + 1, message: "each line is a JSON object: one row, its keys the columns" });
      else {
        rows.push(value as VarsRow);
        lines.push(i + 1);
      }
    } catch (error) {
      problems.push({ line: i + 1, message: `not JSON: ${(error as Error).message}` });
    }
  });
  return problems.length > 0 ? { ok: false, problems } : tableOf(rows, lines);
}

function tableOf(rows: VarsRow[], lines: number[]): TableRead {
  if (rows.length === 0) return { ok: false, problems: [{ line: 1, message: "the table has no rows" }] };
  if (rows.length > MAX_CONVERSATIONS_PER_SPEC) {
    return { ok: false, problems: [{ line: lines[MAX_CONVERSATIONS_PER_SPEC]!, message: `the table has ${rows.length} rows; at most ${MAX_CONVERSATIONS_PER_SPEC}` }] };
  }
  return { ok: true, rows, lines };
}
