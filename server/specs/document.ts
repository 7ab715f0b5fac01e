import type { z } from "zod";
import { checkReferences } from "./check-references.js";
import {
  TestSpecDocumentInputShape,
  TestSpecDocumentShape,
  type TestSpecDocument as Document,
} from "./document-shape.js";
import { isLibraryEntry } from "./security-library/entry.js";
import { expandSecurityLibrary } from "./security-library/expand.js";
import { WHOLE_DOCUMENT } from "./whole-document.js";

// The spec format: its parts' schemas (document-shape.ts), and the document checked as a whole
// (check-references.ts, check-tables.ts).
export * from "./document-shape.js";

/**
 * A spec as written, read as it is stored: the security library's entries expanded into probes,
 * then the whole checked. A problem with an expanded probe is reported at the entry it came from.
 */
export const TestSpecDocument = TestSpecDocumentInputShape.transform((written, ctx) => {
  const { document, origins, problems } = expandSecurityLibrary(written);
  for (const problem of problems) {
    ctx.addIssue({
      code: "custom",
      path: ["security", ...problem.path],
      message: problem.message,
      params: WHOLE_DOCUMENT,
    });
  }
  const generated = origins.map((origin) => isLibraryEntry(written.security![origin]));
  checkReferences(document, atWrittenPaths(ctx, document, origins, generated));
  return document;
}).meta({
  id: "TestSpecDocument",
  title: "assure test specification",
  description: "Format version 1. Scenarios, security probes and the gates that decide a release.",
});
export type TestSpecDocument = Document;

/** A spec as it is stored and read back: probes only in `security`, the library's entries expanded. */
export const StoredTestSpecDocument = TestSpecDocumentShape.meta({
  id: "StoredTestSpecDocument",
  title: "assure test specification, as stored",
  description: "A spec's version as it reads back: the security library's entries expanded into probes.",
});

/** The issues of an expanded document at the paths of the document as written: a generated probe's at its entry. */
function atWrittenPaths(
  ctx: z.RefinementCtx,
  document: Document,
  origins: readonly number[],
  generated: readonly boolean[],
): z.RefinementCtx {
  if (!generated.includes(true)) return ctx;
  return {
    ...ctx,
    addIssue(issue) {
      if (typeof issue === "string" || issue.path?.[0] !== "security" || typeof issue.path[1] !== "number") {
        ctx.addIssue(issue);
        return;
      }
      const p = issue.path[1];
      const probe = document.security![p]!;
      ctx.addIssue(
        generated[p]
          ? { ...issue, path: ["security", origins[p]!], message: `probe '${probe.id}': ${issue.message}` }
          : { ...issue, path: ["security", origins[p]!, ...issue.path.slice(2)] },
      );
    },
  };
}
