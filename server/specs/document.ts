import { checkReferences } from "./check-references.js";
import { TestSpecDocumentShape, type TestSpecDocument as Document } from "./document-shape.js";

// The spec format: its parts' schemas (document-shape.ts), and the document checked as a whole
// (check-references.ts, check-tables.ts).
export * from "./document-shape.js";

export const TestSpecDocument = TestSpecDocumentShape.superRefine(checkReferences).meta({
  id: "TestSpecDocument",
  title: "assure test specification",
  description: "Format version 1. Scenarios, security probes and the gates that decide a release.",
});
export type TestSpecDocument = Document;
