import { LineCounter, parseDocument } from "yaml";

export interface SpecProblem {
  /** Where, from the document's root: `scenarios[0].turns`; `spec` for the text as a whole. */
  path: string;
  message: string;
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

/**
 * Reads a spec written in YAML (JSON is YAML too). Validation is the spec schema's job, once;
 * this keeps the line map so that its errors, and later annotations, can name lines.
 */
export function readSpecYaml(bytes: Buffer): { ok: true; source: SpecSource } | { ok: false; problems: SpecProblem[] } {
  const text = bytes.toString("utf8");
  const lineCounter = new LineCounter();
  const yamlDocument = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (yamlDocument.errors.length > 0) {
    return {
      ok: false,
      problems: yamlDocument.errors.map((error) => ({
        path: "spec",
        message: `${error.message.split("\n")[0]}${error.linePos ? ` (line ${error.linePos[0].line})` : ""}`,
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
  return { ok: true, source: { bytes, text, value, lineOf } };
}
