import type { SpecFile, SpecSource, TestSpec, TestSpecDocument, TestSpecSummary } from "../contract/index.js";
import type { Sql } from "./sql/sql.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";

export interface TestSpecVersionRow {
  test_spec_id: string;
  version_number: number;
  spec_version: string;
  /** Canonical JSON of the validated document. */
  document: string;
  source_format: "json" | "yaml";
  /** The text as it was submitted, so that findings can point at its lines. */
  source_text: string;
  /** JSON: spec_path → line in source_text, for the parts that evaluations cite (YAML only). */
  source_lines: string | null;
  /** Where the file came from, when it came from a repository. */
  source_repository: string | null;
  source_commit_sha: string | null;
  source_path: string | null;
  /** JSON [{path, blob_sha}]: the spec file and the tables it reads. */
  source_files: string | null;
  created_at: string;
}

interface TestSpecRow {
  test_spec_id: string;
  project_id: string;
  name: string;
  created_at: string;
}

/** A spec joined with one of its versions. */
interface TestSpecJoinedRow extends TestSpecRow, Omit<TestSpecVersionRow, "created_at"> {
  updated_at: string;
}

const JOINED = `SELECT s.test_spec_id, s.project_id, s.name, s.created_at,
    v.version_number, v.spec_version, v.document, v.source_format, v.source_text, v.source_lines,
    v.source_repository, v.source_commit_sha, v.source_path, v.source_files, v.created_at AS updated_at
  FROM test_specs s JOIN test_spec_versions v ON v.test_spec_id = s.test_spec_id`;
const LATEST = `v.version_number = (SELECT MAX(version_number) FROM test_spec_versions WHERE test_spec_id = s.test_spec_id)`;

function toSummary(
  row: TestSpecJoinedRow,
  document = JSON.parse(row.document) as Record<string, unknown>,
): TestSpecSummary {
  return {
    test_spec_id: row.test_spec_id,
    project_id: row.project_id,
    name: row.name,
    description: typeof document.description === "string" ? document.description : null,
    spec_version: row.spec_version,
    source:
      row.source_repository && row.source_commit_sha && row.source_path
        ? {
            repository: row.source_repository,
            commit_sha: row.source_commit_sha,
            path: row.source_path,
            ...(row.source_files ? { files: JSON.parse(row.source_files) as SpecFile[] } : {}),
          }
        : null,
    version_number: row.version_number,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function toTestSpec(row: TestSpecJoinedRow): TestSpec {
  const document = JSON.parse(row.document) as Record<string, unknown>;
  return { ...toSummary(row, document), spec: document };
}

/** What a run needs to know of a spec version, without reading its document. */
export interface TestSpecHead {
  test_spec_id: string;
  project_id: string;
  spec_version: string;
}

export interface NewTestSpecVersion {
  project_id: string;
  name: string;
  spec_version: string;
  document: string;
  source_format: "json" | "yaml";
  source_text: string;
  /** spec_path → line in source_text, for the parts that evaluations cite (YAML only). */
  source_lines: Record<string, number> | null;
  source: SpecSource | null;
}

export function makeTestSpecsStore(db: Sql, listPage: ListPage) {
  const specs = makeProjectTable<TestSpecRow>(db, listPage, "test_specs", "test_spec_id");
  const specByName = db.prepare("SELECT * FROM test_specs WHERE project_id = ? AND name = ?");
  const insertSpec = db.prepare(
    "INSERT INTO test_specs (test_spec_id, project_id, name, created_at) VALUES (@test_spec_id, @project_id, @name, @created_at)",
  );
  const insertVersion = db.prepare(`INSERT INTO test_spec_versions
    (test_spec_id, version_number, spec_version, document, source_format, source_text, source_lines,
      source_repository, source_commit_sha, source_path, source_files, created_at)
    VALUES (@test_spec_id, @version_number, @spec_version, @document, @source_format, @source_text, @source_lines,
      @source_repository, @source_commit_sha, @source_path, @source_files, @created_at)`);
  const documentOf = db
    .prepare("SELECT document FROM test_spec_versions WHERE test_spec_id = ? AND spec_version = ? LIMIT 1")
    .pluck();
  const sourceOf = db.prepare(`SELECT s.name, v.source_path, v.source_lines FROM test_specs s
    JOIN test_spec_versions v ON v.test_spec_id = s.test_spec_id WHERE s.test_spec_id = ? AND v.spec_version = ? LIMIT 1`);
  const latestById = db.prepare(`${JOINED} WHERE s.test_spec_id = ? AND ${LATEST}`);
  const versionById = db.prepare(
    `${JOINED} WHERE s.test_spec_id = ? AND v.spec_version = ? ORDER BY v.version_number DESC LIMIT 1`,
  );
  const headLatest = db.prepare(`SELECT s.test_spec_id, s.project_id, v.spec_version
    FROM test_specs s JOIN test_spec_versions v ON v.test_spec_id = s.test_spec_id WHERE s.test_spec_id = ? AND ${LATEST}`);
  const headVersion = db.prepare(`SELECT s.test_spec_id, s.project_id, v.spec_version
    FROM test_specs s JOIN test_spec_versions v ON v.test_spec_id = s.test_spec_id
    WHERE s.test_spec_id = ? AND v.spec_version = ? LIMIT 1`);
  const latestNumber = db
    .prepare("SELECT MAX(version_number) AS version_number FROM test_spec_versions WHERE test_spec_id = ?")
    .pluck();

  /**
   * Adds a version to the spec of that name (creating the spec on first use). Posting the same
   * content as the latest version changes nothing. Runs in one transaction.
   */
  const addVersion = async (
    input: NewTestSpecVersion,
    newSpecId: string,
    now: string,
  ): Promise<{ spec: TestSpecSummary; created: boolean }> =>
    db.transaction(async () => {
      let spec = await specByName.get<TestSpecRow>(input.project_id, input.name);
      if (!spec) {
        spec = { test_spec_id: newSpecId, project_id: input.project_id, name: input.name, created_at: now };
        await insertSpec.run(spec);
      }
      const latest = await latestById.get<TestSpecJoinedRow>(spec.test_spec_id);
      // The version's document is the caller's (its canonical text): the summary goes back without it.
      if (latest?.spec_version === input.spec_version) {
        return { spec: toSummary(latest, JSON.parse(input.document) as Record<string, unknown>), created: false };
      }
      const version_number = ((await latestNumber.get<number | null>(spec.test_spec_id)) ?? 0) + 1;
      // Going back to an earlier content makes it the latest again, under a new number.
      await insertVersion.run({
        test_spec_id: spec.test_spec_id,
        version_number,
        spec_version: input.spec_version,
        document: input.document,
        source_format: input.source_format,
        source_text: input.source_text,
        source_lines: input.source_lines && JSON.stringify(input.source_lines),
        source_repository: input.source?.repository ?? null,
        source_commit_sha: input.source?.commit_sha ?? null,
        source_path: input.source?.path ?? null,
        source_files: input.source?.files ? JSON.stringify(input.source.files) : null,
        created_at: now,
      });
      return {
        spec: toSummary(
          (await latestById.get<TestSpecJoinedRow>(spec.test_spec_id))!,
          JSON.parse(input.document) as Record<string, unknown>,
        ),
        created: true,
      };
    });

  return {
    reads: {
      /** The latest version's head, or the named version's. */
      async getTestSpecHead(testSpecId: string, specVersion?: string): Promise<TestSpecHead | undefined> {
        return specVersion === undefined
          ? headLatest.get<TestSpecHead>(testSpecId)
          : headVersion.get<TestSpecHead>(testSpecId, specVersion);
      },
      /**
       * The document of a version, as the engine runs it. Only documents the spec schema accepted
       * are stored (its output, defaults filled in), so it is not validated again.
       */
      async getSpecDocument(testSpecId: string, specVersion: string): Promise<TestSpecDocument | undefined> {
        const document = await documentOf.get<string>(testSpecId, specVersion);
        return document === undefined ? undefined : (JSON.parse(document) as TestSpecDocument);
      },
      /** A version's name, and where its file is and the line of each part evaluations cite (when it came from a repository). */
      async getSpecVersionSource(
        testSpecId: string,
        specVersion: string,
      ): Promise<{ name: string; path: string | null; lines: Record<string, number> } | undefined> {
        const row = await sourceOf.get<{ name: string; source_path: string | null; source_lines: string | null }>(
          testSpecId,
          specVersion,
        );
        return (
          row && {
            name: row.name,
            path: row.source_path,
            lines: row.source_lines ? (JSON.parse(row.source_lines) as Record<string, number>) : {},
          }
        );
      },
      /** A version's file as it was submitted (or read at its commit), and where it came from. */
      async getSpecVersionText(
        testSpecId: string,
        specVersion: string,
      ): Promise<
        { text: string; repository: string | null; commit_sha: string | null; path: string | null } | undefined
      > {
        const row = await versionById.get<TestSpecJoinedRow>(testSpecId, specVersion);
        return (
          row && {
            text: row.source_text,
            repository: row.source_repository,
            commit_sha: row.source_commit_sha,
            path: row.source_path,
          }
        );
      },
      async getTestSpec(testSpecId: string): Promise<TestSpec | undefined> {
        const row = await latestById.get<TestSpecJoinedRow>(testSpecId);
        return row && toTestSpec(row);
      },
      async getTestSpecVersion(testSpecId: string, specVersion: string): Promise<TestSpec | undefined> {
        const row = await versionById.get<TestSpecJoinedRow>(testSpecId, specVersion);
        return row && toTestSpec(row);
      },
      async listTestSpecs(
        filter: { project_id?: string | undefined },
        page: PageRequest,
      ): Promise<RowPage<TestSpecSummary>> {
        const { rows, next } = await specs.list(filter, page);
        const summaries: TestSpecSummary[] = [];
        for (const row of rows) summaries.push(toSummary((await latestById.get<TestSpecJoinedRow>(row.test_spec_id))!));
        return { rows: summaries, next };
      },
    },
    writes: {
      addTestSpecVersion: addVersion,
    },
  };
}
