import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { SpecSource as SpecOrigin } from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { ReadFile } from "../specs/repository-spec.js";
import type { ApiSpecRead, FileSpecRead } from "./read-spec.js";

/**
 * The thread's script, a CommonJS bundle (scripts/build.js says why). The service runs from its
 * bundle (build/app/main.js next to build/specs/reader-thread.cjs); tests run the TypeScript
 * sources, and a worker cannot load TypeScript, so they use the bundle their global setup builds.
 */
const READER_THREAD_SCRIPT = new URL(
  import.meta.url.endsWith(".ts") ? "../../build/specs/reader-thread.cjs" : "../specs/reader-thread.cjs",
  import.meta.url,
);

/** Reads specs off the event loop: see read-spec.ts. */
export interface SpecReader {
  readJsonBody(text: string): Promise<ApiSpecRead>;
  readYamlBody(bytes: Uint8Array, source: SpecOrigin | null): Promise<ApiSpecRead>;
  /** A repository's spec file at a commit, its tables read with `readFile` first. */
  readRepositoryFile(
    where: { repository: string; commit_sha: string; path: string },
    bytes: Uint8Array,
    readFile: ReadFile,
  ): Promise<FileSpecRead>;
  close(): Promise<void>;
}

/** How much memory one read may take: hostile input ends the read, never the service. */
const READ_HEAP_MB = 512;

/**
 * The spec reader on a thread of its own (piscina), so that reading a large spec never holds the
 * API's event loop; the thread's heap is bounded, and a read that exceeds it is refused as too
 * large while the thread is replaced.
 */
export function startSpecReader({ threads = 1 }: { threads?: number } = {}): SpecReader {
  const pool = new Piscina({
    filename: fileURLToPath(READER_THREAD_SCRIPT),
    minThreads: 1,
    maxThreads: threads,
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: READ_HEAP_MB },
  });
  const run = async <T>(
    name: "readJsonBody" | "readYamlBody" | "readRepositoryFile" | "tablesOf",
    args: unknown[],
  ): Promise<T> => {
    try {
      return (await pool.run(args, { name: `call_${name}` })) as T;
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY") {
        throw new ApiError("PAYLOAD_TOO_LARGE", {
          message: "The spec is too large to read.",
          details: [{ path: "spec", message: `reading it took more than ${READ_HEAP_MB} MB` }],
          cause: error,
        });
      }
      throw error;
    }
  };
  return {
    readJsonBody: (body) => run("readJsonBody", [body]),
    readYamlBody: (bytes, source) => run("readYamlBody", [bytes, source]),
    async readRepositoryFile(where, bytes, readFile) {
      const names = await run<string[]>("tablesOf", [bytes]);
      const tables: Record<string, Uint8Array | undefined> = {};
      for (const name of names) tables[name] = await readFile(name);
      return run("readRepositoryFile", [where, bytes, tables]);
    },
    close: () => pool.close(),
  };
}
