import { closestIssues } from "./closest-issues.js";
import { gitBlobSha } from "./canonical-json.js";
import { writesLibraryEntries } from "./security-library/entry.js";
import { TestSpecDocument, VarsFilePath } from "./document.js";
import { formatSpecPath, readSpecYaml, type SpecSource } from "./read-yaml.js";
import { readTable } from "./tables.js";

/** A file of a spec's version in the repository: the spec itself, or a table it reads. */
export interface SpecFile {
  path: string;
  blob_sha: string;
}

/** A spec file read at a commit, the tables its scenarios name (`vars_file`) inlined as their `vars`. */
export interface RepositorySpec {
  document: TestSpecDocument;
  /** The spec file's text, with the line of each part. */
  text: SpecSource;
  /** The spec file, then each table it reads, with the Git blob SHA of each. */
  files: SpecFile[];
  /** Tables were inlined: the version is the expanded document's content address, not the file's blob. */
  expanded: boolean;
}

/** What is wrong, where: the file (the spec or a table), its line, and the part of the spec. */
export interface SpecFileProblem {
  file: string;
  line: number;
  path: string;
  message: string;
}

export type ReadFile = (path: string) => Buffer | undefined | Promise<Buffer | undefined>;

/**
 * Reads a spec file as the App and the Action find it at a commit (the server too, when a
 * workflow uploads the files): its YAML, the table each scenario names in `vars_file` read with
 * `readFile` and inlined as `vars`, and the whole validated once. Problems in a table name its
 * file and the row's line.
 */
export async function loadRepositorySpec(
  path: string,
  bytes: Buffer,
  readFile: ReadFile,
): Promise<{ ok: true; spec: RepositorySpec } | { ok: false; problems: SpecFileProblem[] }> {
  const read = readSpecYaml(bytes);
  if (!read.ok) {
    return {
      ok: false,
      problems: read.problems.map((p) => ({ file: path, line: p.line ?? 1, path: p.path, message: p.message })),
    };
  }
  const { source } = read;
  const problems: SpecFileProblem[] = [];
  const atSpec = (specPath: (string | number)[], message: string) =>
    problems.push({ file: path, line: source.lineOf(specPath) ?? 1, path: formatSpecPath(specPath), message });

  const files: SpecFile[] = [{ path, blob_sha: gitBlobSha(bytes) }];
  /** Per scenario with a table: its file, and the line each row starts on. */
  const tables = new Map<number, { file: string; lines: number[] }>();
  const scenarios = (source.value as { scenarios?: unknown } | null)?.scenarios;
  if (Array.isArray(scenarios)) {
    for (const [s, scenario] of scenarios.entries()) {
      const file = (scenario as { vars_file?: unknown } | null)?.vars_file;
      if (typeof file !== "string" || !VarsFilePath.safeParse(file).success) continue; // the schema reports it
      if ((scenario as { vars?: unknown }).vars !== undefined) {
        atSpec(["scenarios", s, "vars_file"], "give the rows as vars or in vars_file, not both");
        continue;
      }
      const tableBytes = await readFile(file);
      if (!tableBytes) {
        atSpec(["scenarios", s, "vars_file"], `'${file}' is not in the repository at this commit`);
        continue;
      }
      const table = readTable(file, tableBytes);
      if (!table.ok) {
        for (const p of table.problems) {
          problems.push({
            file,
            line: p.line,
            path: formatSpecPath(["scenarios", s, "vars_file"]),
            message: p.message,
          });
        }
        continue;
      }
      (scenario as { vars?: unknown }).vars = table.rows;
      tables.set(s, { file, lines: table.lines });
      if (!files.some((known) => known.path === file)) files.push({ path: file, blob_sha: gitBlobSha(tableBytes) });
    }
  }
  if (problems.length > 0) return { ok: false, problems };

  const parsed = TestSpecDocument.safeParse(source.value);
  if (!parsed.success) {
    return {
      ok: false,
      problems: closestIssues(parsed.error.issues).map((issue) => {
        const issuePath = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
        const [root, s, field, r] = issuePath;
        const table = root === "scenarios" && field === "vars" && typeof s === "number" ? tables.get(s) : undefined;
        if (table) {
          const line = typeof r === "number" ? table.lines[r] : undefined;
          return { file: table.file, line: line ?? 1, path: formatSpecPath(issuePath), message: issue.message };
        }
        return {
          file: path,
          line: source.lineOf(issue.path) ?? 1,
          path: formatSpecPath(issuePath),
          message: issue.message,
        };
      }),
    };
  }
  // A library entry's probes are the service's, not the file's: the file's bytes alone do not say what runs.
  const expanded = tables.size > 0 || writesLibraryEntries(source.value);
  return { ok: true, spec: { document: parsed.data, text: source, files, expanded } };
}
