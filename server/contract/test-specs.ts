import { z } from "zod";
import { OwningProject, ResourceId, Timestamp, listOf } from "./common.js";
import { TestSpecDocument } from "../specs/document.js";

const TestSpecFields = {
  test_spec_id: z.string(),
  project_id: z.string(),
  name: z.string().describe("From the document's `name`; posting a document with the same name adds a version"),
  description: z.string().nullable(),
  spec_version: z.string().describe("Content address of the latest version: sha256:<hex> of its canonical JSON"),
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
});

export const TestSpecList = listOf(TestSpecSummary).meta({ id: "TestSpecList" });
