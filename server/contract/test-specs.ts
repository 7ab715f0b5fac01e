import { z } from "zod";
import { CommitSha, OwningProject, RepositoryName, ResourceId, Timestamp, listOf, schemaOf } from "./common.js";
import { TestSpecDocument, VarsFilePath } from "../specs/document.js";

const SpecSourceFields = {
  repository: RepositoryName,
  commit_sha: CommitSha,
  path: z
    .string()
    .min(1)
    .max(500)
    .regex(
      /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[^\0\\]+$/,
      "a path relative to the repository's root, without '.' or '..' segments",
    )
    .describe("Where the file is in the repository, e.g. .assure/specs/refund.yaml"),
};

export const SpecFile = z
  .object({ path: SpecSourceFields.path, blob_sha: z.string().describe("Its Git blob SHA at the commit") })
  .meta({ id: "SpecFile" });
export type SpecFile = z.infer<typeof SpecFile>;

/** Where a spec's file came from: a repository, a commit and a path. */
export const SpecSource = z
  .object({
    ...SpecSourceFields,
    files: z
      .array(SpecFile)
      .optional()
      .describe("The spec file and each table its scenarios read (vars_file), when it reads any"),
  })
  .meta({ id: "SpecSource" });
export type SpecSource = z.infer<typeof SpecSource>;

const TestSpecFields = {
  test_spec_id: z.string(),
  project_id: z.string(),
  name: z.string().describe("From the document's `name`; posting a document with the same name adds a version"),
  description: z.string().nullable(),
  spec_version: z
    .string()
    .describe(
      "Content address of the latest version: git:<blob SHA> of the file's bytes when it came from a repository, else sha256:<hex> of its canonical JSON",
    ),
  source: SpecSource.nullable().describe("Where the latest version's file came from, when it came from a repository"),
  version_number: z.number().int().describe("1 for the first version, counting up"),
  created_at: Timestamp,
  updated_at: Timestamp.describe("When the latest version was added"),
};

export const TestSpecSummary = z.object(TestSpecFields).meta({ id: "TestSpecSummary" });
export type TestSpecSummary = z.infer<typeof TestSpecSummary>;

export const TestSpec = z
  .object({
    ...TestSpecFields,
    spec: schemaOf(z.record(z.string(), z.unknown()), "StoredTestSpecDocumentInput").describe(
      "The spec document of this version, as the spec format takes it: its defaults filled in, a repository file's tables inlined as vars, and the security library's entries expanded into probes",
    ),
  })
  .meta({ id: "TestSpec" });
export type TestSpec = z.infer<typeof TestSpec>;

const FileText = z.string().max(7 * 1024 * 1024);
const Encoding = z
  .enum(["utf-8", "base64"])
  .default("utf-8")
  .describe(
    "How content is written: the text (utf-8, the default), or base64 of the file's bytes, which keeps them exact whatever their encoding",
  );

/** A spec file as a repository holds it at a commit, with the tables its scenarios read. */
export const RepositorySpecFile = z
  .strictObject({
    ...SpecSourceFields,
    content: FileText.describe("The file at that commit"),
    encoding: Encoding,
    tables: z
      .array(
        z.strictObject({
          path: VarsFilePath,
          content: FileText.describe("The table at that commit"),
          encoding: Encoding,
        }),
      )
      .max(100)
      .optional()
      .describe("Each file the spec's scenarios name in vars_file"),
  })
  .meta({ id: "RepositorySpecFile" });
export type RepositorySpecFile = z.infer<typeof RepositorySpecFile>;

export const CreateTestSpecBody = z
  .strictObject({
    project_id: OwningProject,
    spec: TestSpecDocument.optional().describe("The spec document (or give file)"),
    file: RepositorySpecFile.optional().describe(
      "Instead of spec: a spec file from a repository, with the tables it reads; versioned as the App versions it (git:<blob SHA> of the file, or sha256: of the document with its tables inlined)",
    ),
  })
  .refine((body) => (body.spec === undefined) !== (body.file === undefined), {
    message: "give spec or file, one of them",
    path: ["spec"],
  })
  .meta({
    id: "CreateTestSpecBody",
    oneOf: [
      { required: ["spec"], properties: { file: false } },
      { required: ["file"], properties: { spec: false } },
    ],
  });
export type CreateTestSpecBody = z.infer<typeof CreateTestSpecBody>;

export const CreateTestSpecQuery = z.strictObject({
  project_id: ResourceId.optional().describe("With an application/yaml body: the project (a project key may omit it)"),
  repository: SpecSourceFields.repository
    .optional()
    .describe("With commit_sha and path, and a YAML body: where the file came from"),
  commit_sha: SpecSourceFields.commit_sha.optional(),
  path: SpecSourceFields.path.optional(),
});
export type CreateTestSpecQuery = z.infer<typeof CreateTestSpecQuery>;

export const TestSpecList = listOf(TestSpecSummary).meta({ id: "TestSpecList" });
