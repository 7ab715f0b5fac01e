import { z } from "zod";
import { CommitSha, OwningProject, RepositoryName, ResourceId, Timestamp, listOf } from "./common.js";
import { TestSpecDocument } from "../specs/document.js";

const SpecSourceFields = {
  repository: RepositoryName,
  commit_sha: CommitSha,
  path: z
    .string()
    .min(1)
    .max(500)
    .regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[^\0\\]+$/, "a path relative to the repository's root, without '.' or '..' segments")
    .describe("Where the file is in the repository, e.g. .assure/specs/refund.yaml"),
};

/** Where a spec's file came from: a repository, a commit and a path. */
export const SpecSource = z.object(SpecSourceFields).meta({ id: "SpecSource" });
export type SpecSource = z.infer<typeof SpecSource>;

const TestSpecFields = {
  test_spec_id: z.string(),
  project_id: z.string(),
  name: z.string().describe("From the document's `name`; posting a document with the same name adds a version"),
  description: z.string().nullable(),
  spec_version: z
    .string()
    .describe("Content address of the latest version: git:<blob SHA> of the file's bytes when it came from a repository, else sha256:<hex> of its canonical JSON"),
  source: SpecSource.nullable().describe("Where the latest version's file came from, when it came from a repository"),
  version_number: z.number().int().describe("1 for the first version, counting up"),
  created_at: Timestamp,
  updated_at: Timestamp.describe("When the latest version was added"),
};

export const TestSpecSummary = z.object(TestSpecFields).meta({ id: "TestSpecSummary" });
export type TestSpecSummary = z.infer<typeof TestSpecSummary>;

export const TestSpec = z
  .object({ ...TestSpecFields, spec: z.record(z.string(), z.unknown()).describe("The spec document of this version") })
  .meta({ id: "TestSpec" });
export type TestSpec = z.infer<typeof TestSpec>;

export const CreateTestSpecBody = z
  .strictObject({
    project_id: OwningProject,
    spec: TestSpecDocument,
  })
  .meta({ id: "CreateTestSpecBody" });
export type CreateTestSpecBody = z.infer<typeof CreateTestSpecBody>;

export const CreateTestSpecQuery = z.strictObject({
  project_id: ResourceId.optional().describe("With an application/yaml body: the project (a project key may omit it)"),
  repository: SpecSourceFields.repository.optional().describe("With commit_sha and path, and a YAML body: where the file came from"),
  commit_sha: SpecSourceFields.commit_sha.optional(),
  path: SpecSourceFields.path.optional(),
});
export type CreateTestSpecQuery = z.infer<typeof CreateTestSpecQuery>;

export const TestSpecList = listOf(TestSpecSummary).meta({ id: "TestSpecList" });
