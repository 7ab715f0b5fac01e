import type { z } from "zod";
import { isWholeDocumentIssue } from "../specs/whole-document.js";
import { CreateTestSpecBody, type SpecSource as SpecOrigin } from "../contract/index.js";
import type { ErrorDetail } from "../errors.js";
import { issueDetail } from "../contract/issue-details.js";
import { closestIssues } from "../specs/closest-issues.js";
import { writesLibraryEntries } from "../specs/security-library/entry.js";
import type { NewTestSpecVersion } from "../store/test-specs.js";
import { TestSpecDocument, VarsFilePath } from "../specs/document.js";
import { formatSpecPath, readSpecYaml } from "../specs/read-yaml.js";
import { loadRepositorySpec, type SpecFileProblem } from "../specs/repository-spec.js";
import { toSpecVersion } from "../specs/spec-version.js";
import { LONE_SURROGATE, loneSurrogateAt } from "../specs/unicode.js";

/**
 * Reading a spec — its YAML, its tables, validating the whole, its canonical form and version —
 * takes time in proportion to its size (a second for a 3.5 MB YAML file), so the service does it
 * on a thread of its own (spec-reader.ts). These functions are what that thread runs: plain data in,
 * plain data out.
 */

/** A spec version ready to be stored, but for its project. */
export type ReadVersion = Omit<NewTestSpecVersion, "project_id">;

/** A spec sent to the API: the version to store (and what the body says of its project and repository), or the refusal. */
export type ApiSpecRead =
  | { ok: true; version: ReadVersion; project_id?: string | undefined; repository?: string | undefined }
  | {
      ok: false;
      code: "VALIDATION_FAILED" | "MALFORMED_BODY" | "SPEC_INCONSISTENT" | "SPEC_FILE_INVALID";
      message: string;
      details?: ErrorDetail[] | undefined;
    };

/** A spec whose parts each match the schema but that does not hold together is refused apart from one that breaks the schema. */
function refusedSpec(issues: readonly z.core.$ZodIssue[]) {
  return issues.every((issue) => isWholeDocumentIssue(issue as { code: string; params?: Record<string, unknown> }))
    ? ({
        code: "SPEC_INCONSISTENT",
        message: "The spec does not hold together (a reference, an id, a table); see details.",
      } as const)
    : ({ code: "VALIDATION_FAILED", message: "The request does not match the schema; see details." } as const);
}

/** A repository's spec file: the version to store (and its document), or its problems by file and line. */
export type FileSpecRead =
  { ok: true; version: ReadVersion; document: TestSpecDocument } | { ok: false; problems: SpecFileProblem[] };

/** The row of a validated spec version, but for its project. */
export const versionRow = (
  document: TestSpecDocument,
  parts: { canonical: string; spec_version: string; lines: Record<string, number> | null },
  text: { format: "json" | "yaml"; text: string },
  source: SpecOrigin | null,
): ReadVersion => ({
  name: document.name,
  spec_version: parts.spec_version,
  document: parts.canonical,
  source_format: text.format,
  source_text: text.text,
  source_lines: parts.lines,
  source,
});

const bytesOf = (text: string, encoding: "utf-8" | "base64") =>
  Buffer.from(text, encoding === "base64" ? "base64" : "utf8");

/** `POST /v1/test-specs` as JSON (its text): parsed, the whole body checked (`spec`, or a repository `file` with its tables), then versioned. */
export async function readJsonBody(text: string): Promise<ApiSpecRead> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, code: "MALFORMED_BODY", message: "The request body is not well-formed JSON." };
  }
  const illFormed = loneSurrogateAt(body);
  if (illFormed) {
    return {
      ok: false,
      code: "VALIDATION_FAILED",
      message: "The request does not match the schema; see details.",
      details: [{ path: formatSpecPath(illFormed, "body"), message: `this text ${LONE_SURROGATE}` }],
    };
  }
  const parsed = CreateTestSpecBody.safeParse(body);
  if (!parsed.success) {
    const issues = closestIssues(parsed.error.issues);
    return {
      ok: false,
      ...refusedSpec(issues),
      details: issues.map((issue) => issueDetail(issueOf(issue), "body")),
    };
  }
  const { spec, file, project_id } = parsed.data;
  if (spec) {
    return {
      ok: true,
      project_id,
      version: versionRow(spec, toSpecVersion(spec), { format: "json", text: JSON.stringify(spec, null, 2) }, null),
    };
  }
  const { content, encoding, tables = [], ...where } = file!;
  const read = await readRepositoryFile(
    where,
    bytesOf(content, encoding),
    Object.fromEntries(tables.map((table) => [table.path, bytesOf(table.content, table.encoding)])),
  );
  if (read.ok) return { ok: true, project_id, repository: where.repository, version: read.version };
  return {
    ok: false,
    code: "SPEC_FILE_INVALID",
    message: `The spec file ${where.path} is not valid.`,
    details: read.problems.map((problem) => {
      const table = tables.findIndex((candidate) => candidate.path === problem.file);
      return {
        path: table >= 0 ? `body.file.tables[${table}]` : "body.file.content",
        message: `${problem.file}:${problem.line}: ${problem.path}: ${problem.message}`,
      };
    }),
  };
}

/** `POST /v1/test-specs` as `application/yaml`: the text read with its lines, checked, versioned (as the repository's file when `source` says where it came from). */
export function readYamlBody(bytes: Uint8Array, source: SpecOrigin | null): ApiSpecRead {
  const read = readSpecYaml(Buffer.from(bytes));
  if (!read.ok) {
    return {
      ok: false,
      code: "VALIDATION_FAILED",
      message: "The spec is not valid YAML.",
      details: read.problems.map(({ path, message, line }) => ({
        path,
        message: line === undefined ? message : `${message} (line ${line})`,
      })),
    };
  }
  const parsed = TestSpecDocument.safeParse(read.source.value);
  if (!parsed.success) {
    const issues = closestIssues(parsed.error.issues);
    return {
      ok: false,
      ...refusedSpec(issues),
      details: issues.map((issue) => issueDetail(issueOf(issue), "spec", read.source.lineOf)),
    };
  }
  return {
    ok: true,
    version: versionRow(
      parsed.data,
      toSpecVersion(parsed.data, read.source, {
        fromRepository: source !== null,
        expanded: writesLibraryEntries(read.source.value),
      }),
      { format: "yaml", text: read.source.text },
      source,
    ),
  };
}

/** A repository's spec file at a commit, with the tables it names (`tablesOf`) as read there: as the App and the Action read it. */
export async function readRepositoryFile(
  where: { repository: string; commit_sha: string; path: string },
  bytes: Uint8Array,
  tables: Readonly<Record<string, Uint8Array | undefined>>,
): Promise<FileSpecRead> {
  const loaded = await loadRepositorySpec(where.path, Buffer.from(bytes), (path) =>
    tables[path] ? Buffer.from(tables[path]!) : undefined,
  );
  if (!loaded.ok) return loaded;
  const { document, text, files, expanded } = loaded.spec;
  const source: SpecOrigin = { ...where, ...(expanded ? { files } : {}) };
  return {
    ok: true,
    document,
    version: versionRow(
      document,
      toSpecVersion(document, text, { fromRepository: true, expanded }),
      { format: "yaml", text: text.text },
      source,
    ),
  };
}

/** The tables a spec file's scenarios name (`vars_file`), to be read before the file is. */
export function tablesOf(bytes: Uint8Array): string[] {
  const read = readSpecYaml(Buffer.from(bytes));
  if (!read.ok) return [];
  const scenarios = (read.source.value as { scenarios?: unknown } | null)?.scenarios;
  if (!Array.isArray(scenarios)) return [];
  const named = scenarios.map((scenario) => (scenario as { vars_file?: unknown } | null)?.vars_file);
  return [
    ...new Set(
      named.filter((file): file is string => typeof file === "string" && VarsFilePath.safeParse(file).success),
    ),
  ];
}

function issueOf(issue: { path: PropertyKey[]; code: string; message: string; keys?: string[] }) {
  return { path: issue.path, code: issue.code, message: issue.message, keys: issue.keys };
}
