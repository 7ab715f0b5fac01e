import { CST, Lexer, LineCounter, parseDocument } from "yaml";
import { MAX_NESTING, tooDeep } from "./nesting.js";
import { LONE_SURROGATE, loneSurrogateAt } from "./unicode.js";

export interface SpecProblem {
  /** Where, from the document's root: `scenarios[0].turns`; `spec` for the text as a whole. */
  path: string;
  message: string;
  /** The line in the text, when it is known. */
  line?: number | undefined;
}

/** A spec's YAML text, read but not yet validated, with the line of each of its nodes. */
export interface SpecSource {
  /** The bytes as received, and as text. */
  bytes: Buffer;
  text: string;
  value: unknown;
  /** The line of the node at `path` (or of its nearest ancestor that has one). */
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

/** `scenarios[0].turns` style: how a reader finds the place in the file. */
export function formatSpecPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number" || (typeof part === "string" && /^\d+$/.test(part))) out += `[${String(part)}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(root)";
}

/** `scenarios[0].turns[1].expect` → `["scenarios", 0, "turns", 1, "expect"]` (as formatSpecPath writes paths). */
export function parseSpecPath(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] === undefined ? match[1]! : Number(match[2]),
  );
}

/**
 * Reads a spec written in YAML (JSON is YAML too). Validation is the spec schema's job, once;
 * this keeps the line map so that its errors, and later annotations, can name lines.
 */
export function readSpecYaml(bytes: Buffer): { ok: true; source: SpecSource } | { ok: false; problems: SpecProblem[] } {
  const text = bytes.toString("utf8");
  const deep = nestingBeyond(text, 4 * MAX_NESTING);
  if (deep !== undefined) {
    return { ok: false, problems: [{ path: "spec", message: `nested deeper than ${MAX_NESTING} levels`, line: deep }] };
  }
  const lineCounter = new LineCounter();
  const yamlDocument = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (yamlDocument.errors.length > 0) {
    return {
      ok: false,
      problems: yamlDocument.errors.map((error) => ({
        path: "spec",
        message: error.message.split("\n")[0]!,
        line: error.linePos?.[0].line,
      })),
    };
  }
  let value: unknown;
  try {
    value = yamlDocument.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, problems: [{ path: "spec", message: error instanceof Error ? error.message : String(error) }] };
  }
  const lineOf = (path: readonly PropertyKey[]) => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = yamlDocument.getIn(path.slice(0, depth) as unknown[], true) as { range?: [number] } | undefined;
      if (node?.range) return lineCounter.linePos(node.range[0]).line;
    }
    return undefined;
  };
  const deeper = tooDeep(value);
  if (deeper) {
    return {
      ok: false,
      problems: [
        { path: formatSpecPath(deeper), message: `nested deeper than ${MAX_NESTING} levels`, line: lineOf(deeper) },
      ],
    };
  }
  const illFormed = loneSurrogateAt(value);
  if (illFormed) {
    return {
      ok: false,
      problems: [{ path: formatSpecPath(illFormed), message: `this text ${LONE_SURROGATE}`, line: lineOf(illFormed) }],
    };
  }
  return { ok: true, source: { bytes, text, value, lineOf } };
}

/**
 * The line at which YAML text might nest deeper than `max`, found by its tokens alone (flow
 * brackets, indentation, and the indicators that open a block on one line: `- - - x`), before
 * anything is built from it: YAML's composer recurses, and text nested thousands deep would
 * exhaust the stack or the heap. The estimate errs high; the value's real depth is checked after.
 */
function nestingBeyond(text: string, max: number): number | undefined {
  let flow = 0;
  let indent = 0;
  let indicators = 0;
  let line = 1;
  let lineStart = true;
  for (const token of new Lexer().lex(text)) {
    switch (CST.tokenType(token)) {
      case "flow-map-start":
      case "flow-seq-start":
        flow++;
        break;
      case "flow-map-end":
      case "flow-seq-end":
        flow = Math.max(0, flow - 1);
        break;
      case "newline":
        line++;
        indent = 0;
        indicators = 0;
        lineStart = true;
        continue;
      case "space":
        if (lineStart) indent = token.length;
        break;
      case "seq-item-ind":
      case "explicit-key-ind":
      case "map-value-ind":
        indicators++;
        break;
    }
    lineStart = false;
    if (flow + indent + indicators > max) return line;
  }
  return undefined;
}

/**
 * A YAML file read and checked against a schema, once: its value, or every problem with its path
 * and line (`prefix` names the root in paths, e.g. `spec`).
 */
export function validateYaml<T>(
  bytes: Buffer,
  schema: {
    safeParse(value: unknown):
      | { success: true; data: T }
      | {
          success: false;
          error: { issues: { path: PropertyKey[]; message: string; code: string; keys?: string[] }[] };
        };
  },
  prefix = "",
): { ok: true; value: T; source: SpecSource } | { ok: false; problems: SpecProblem[] } {
  const read = readSpecYaml(bytes);
  if (!read.ok) return read;
  const parsed = schema.safeParse(read.source.value);
  if (parsed.success) return { ok: true, value: parsed.data, source: read.source };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => ({
      path: formatSpecPath(
        issue.code === "unrecognized_keys" ? [...issue.path, issue.keys?.[0] ?? ""] : issue.path,
        prefix,
      ),
      message: issue.message,
      line: read.source.lineOf(issue.path),
    })),
  };
}
