// The spec reader's thread: piscina calls its exports by name (spec-reader.ts passes the arguments
// as one array). Bundled, with what it uses, to build/specs/reader-thread.cjs.
import { readJsonBody, readRepositoryFile, readYamlBody, tablesOf } from "./read-spec.js";

export const call_readJsonBody = ([text]: [string]) => readJsonBody(text);
export const call_readYamlBody = ([bytes, source]: Parameters<typeof readYamlBody>) => readYamlBody(bytes, source);
export const call_readRepositoryFile = ([where, bytes, tables]: Parameters<typeof readRepositoryFile>) =>
  readRepositoryFile(where, bytes, tables);
export const call_tablesOf = ([bytes]: Parameters<typeof tablesOf>) => tablesOf(bytes);
