import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { OtlpEncoding } from "../engine/traces/otlp.js";
import { TraceReaderBusy, type ContentEncoding, type ExportRead } from "./read-export.js";

export { TraceReaderBusy };

/** The thread's script, a CommonJS bundle beside the service's (see spec-reader.ts: tests use the bundle their global setup builds). */
const READER_THREAD_SCRIPT = new URL(
  import.meta.url.endsWith(".ts") ? "../../build/traces/reader-thread.cjs" : "../traces/reader-thread.cjs",
  import.meta.url,
);

/** How much memory reading one export may take: a 4 MiB export decodes to far less. */
const READ_HEAP_MB = 256;

/** Reads OTLP exports off the event loop: see read-export.ts. */
export interface TraceReader {
  /** The export's facts; throws TraceReaderBusy, at once, when its bytes would take the queue past its bound. */
  read(body: Uint8Array, encoding: OtlpEncoding, contentEncoding: ContentEncoding): Promise<ExportRead>;
  close(): Promise<void>;
}

/**
 * The trace reader on threads of its own (piscina), so that decoding exports never holds the API's
 * event loop nor fills its heap; the exports waiting for a thread are bounded by their bytes, so a
 * flood of exports is refused (and retried by the exporter) instead of piling up in memory.
 */
export function startTraceReader({
  threads = 1,
  maxPendingBytes,
}: {
  threads?: number;
  /** Export bytes being read or waiting to be read at once (ASSURE_OTLP_QUEUE_BYTES). */
  maxPendingBytes: number;
}): TraceReader {
  const pool = new Piscina({
    filename: fileURLToPath(READER_THREAD_SCRIPT),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: READ_HEAP_MB },
  });
  let pendingBytes = 0;
  return {
    async read(body, encoding, contentEncoding) {
      const size = body.byteLength;
      if (pendingBytes + size > maxPendingBytes) throw new TraceReaderBusy(pendingBytes);
      pendingBytes += size;
      try {
        return (await pool.run([body, encoding, contentEncoding], { name: "call_readTraceExport" })) as ExportRead;
      } catch (error) {
        if ((error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY") {
          return {
            ok: false,
            code: "PAYLOAD_TOO_LARGE",
            message: `Reading the export took more than ${READ_HEAP_MB} MB.`,
          };
        }
        throw error;
      } finally {
        pendingBytes -= size;
      }
    },
    close: () => pool.close(),
  };
}
