/** A schema's objection to a value (a zod issue), as it is reported. */
export interface SchemaIssue {
  path: readonly PropertyKey[];
  code: string;
  message: string;
  /** For an unknown field: its name(s). */
  keys?: readonly string[] | undefined;
}

/** `["spec", "scenarios", 0, "turns"]` under `body` → `body.spec.scenarios[0].turns`. */
export function fieldPath(where: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, part) =>
      typeof part === "number" || /^\d+$/.test(String(part))
        ? `${out}[${String(part)}]`
        : out
          ? `${out}.${String(part)}`
          : String(part),
    where,
  );
}

/**
 * An issue as the error envelope's detail: where (under `where`: body, query…) and what; an unknown
 * field named in the path; with `lineOf`, the line of the text it came from (a spec sent as YAML).
 */
export function issueDetail(
  issue: SchemaIssue,
  where: string,
  lineOf?: (path: readonly PropertyKey[]) => number | undefined,
): { path: string; message: string } {
  let path = fieldPath(where, issue.path);
  let message = issue.message;
  if (issue.code === "unrecognized_keys" && issue.keys) {
    path = `${path}.${issue.keys.join(",")}`;
    message = `unknown field: ${issue.keys.join(", ")}`;
  }
  const line = lineOf?.(
    issue.path.map((part) => (typeof part === "string" && /^\d+$/.test(part) ? Number(part) : part)),
  );
  return { path, message: line === undefined ? message : `${message} (line ${line})` };
}
