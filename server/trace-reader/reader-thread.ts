// The trace reader's thread: piscina calls its exports by name (trace-reader.ts passes the arguments
// as one array). Bundled, with what it uses, to build/traces/reader-thread.cjs.
import { readTraceExport } from "./read-export.js";

export const call_readTraceExport = ([body, encoding, contentEncoding]: Parameters<typeof readTraceExport>) =>
  readTraceExport(body, encoding, contentEncoding);
