/** What marks a problem of the document as a whole (a reference, a table, how requirements combine), which no JSON Schema of its parts can say. */
export const WHOLE_DOCUMENT = { whole_document: true } as const;

/** True for a problem only the document as a whole shows: its parts are each valid. */
export const isWholeDocumentIssue = (issue: { code: string; params?: Record<string, unknown> | undefined }) =>
  issue.code === "custom" && issue.params?.whole_document === true;
