import { Worker } from "node:worker_threads";
import type { OpenStoreOptions } from "../index.js";
import type { WriteCommand, WriteResults } from "./commands.js";
import type { FromWriter, SerializedError, SettledWrite, ToWriter, WriterThreadData } from "./protocol.js";

/**
 * The writer thread's script. The service runs from its bundle (build/app/main.js next to
 * build/store/writer-thread.js); tests run the TypeScript sources, and a worker cannot load
 * TypeScript, so they use the bundle that their global setup builds.
 */
const WRITER_THREAD_SCRIPT = new URL(
  import.meta.url.endsWith(".ts") ? "../../../build/store/writer-thread.js" : "../store/writer-thread.js",
  import.meta.url,
);

export interface WriterOptions {
  path: string;
  /** How the thread opens the database (synchronous, busy timeout, encryption key). */
  db?: Omit<OpenStoreOptions, "clock">;
  /** How long a lazy write may wait for a write that someone awaits before it is sent on its own. */
  lazyCommitMs?: number;
  /** Called if the thread stops without being closed: from then on every write fails. */
  onFailure?: (error: Error) => void;
}

export interface Writer {
  /**
   * Applies the commands together (all or none) in the writer thread's next group commit;
   * resolves with their results once durable. Writes commit in the order they were made, so
   * awaiting one makes every earlier one durable too.
   */
  write<const C extends readonly WriteCommand[]>(...commands: C): Promise<WriteResults<C>>;
  /** As `write`, but starts no commit of its own: it rides with the next `write`, or goes after `lazyCommitMs`. */
  writeLazily<const C extends readonly WriteCommand[]>(...commands: C): Promise<WriteResults<C>>;
  /** Commits what was written, then stops the thread. */
  close(): Promise<void>;
  /**
   * Group commits and the writes they held, so far; writes waiting to be sent to the thread
   * (`queued`: lazy ones wait for an ordinary one) and sent but not yet settled (`inFlight`); and
   * how long the thread has been busy in all, waiting for SQLite's locks included (ms).
   */
  readonly stats: {
    commits: number;
    writes: number;
    readonly queued: number;
    readonly inFlight: number;
    readonly busyMs: number;
  };
}

export class WriterStoppedError extends Error {
  override name = "WriterStoppedError";
}

function toError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack) error.stack = serialized.stack;
  if (serialized.code) Object.assign(error, { code: serialized.code });
  return error;
}

interface Pending {
  id: number;
  commands: readonly WriteCommand[];
  resolve(values: unknown[]): void;
  reject(error: unknown): void;
}

/**
 * Starts the thread that owns the service's only writing connection and resolves once it has
 * opened the database. Writes made in one turn of the event loop go to it in one message.
 */
export async function startWriter({ path, db = {}, lazyCommitMs = 20, onFailure }: WriterOptions): Promise<Writer> {
  const thread = new Worker(WRITER_THREAD_SCRIPT, {
    workerData: { path, db } satisfies WriterThreadData,
    // Everything the thread allocates is short-lived (each batch of writes): a small young
    // generation keeps its heap at about 20 MB instead of growing to 30 and more.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const unsent: Pending[] = [];
  const sent = new Map<number, Pending>();
  let nextId = 1;
  let sendScheduled = false;
  let lazyTimer: NodeJS.Timeout | undefined;
  let stopped: Error | undefined;
  let closing: Promise<void> | undefined;
  let started = false; // a failure before that is startWriter's own rejection

  function fail(error: Error): void {
    if (!stopped && !closing && started) onFailure?.(error);
    stopped ??= error;
    clearTimeout(lazyTimer);
    for (const pending of [...unsent, ...sent.values()]) pending.reject(stopped);
    unsent.length = 0;
    sent.clear();
  }

  function send(): void {
    sendScheduled = false;
    clearTimeout(lazyTimer);
    lazyTimer = undefined;
    if (unsent.length === 0 || stopped) return;
    const writes = unsent.splice(0);
    try {
      post(writes);
    } catch {
      // Something in the batch cannot be copied to the thread (a function, say): send each write
      // alone, so that only the one at fault fails.
      for (const pending of writes) {
        try {
          post([pending]);
        } catch (error) {
          pending.reject(error);
        }
      }
    }
  }

  function post(writes: Pending[]): void {
    thread.postMessage({
      kind: "write",
      writes: writes.map(({ id, commands }) => ({ id, commands })),
    } satisfies ToWriter);
    for (const pending of writes) sent.set(pending.id, pending);
  }

  const stats = {
    commits: 0,
    writes: 0,
    get queued() {
      return unsent.length;
    },
    get inFlight() {
      return sent.size;
    },
    get busyMs() {
      return thread.performance.eventLoopUtilization().active;
    },
  };
  function settle(writes: SettledWrite[]): void {
    stats.commits++;
    stats.writes += writes.length;
    for (const settled of writes) {
      const pending = sent.get(settled.id);
      if (!pending) continue;
      sent.delete(settled.id);
      if (settled.ok) pending.resolve(settled.values);
      else pending.reject(toError(settled.error));
    }
  }

  let announceClosed = () => {};
  const closed = new Promise<void>((resolve) => (announceClosed = resolve));
  const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    thread.on("message", (message: FromWriter) => {
      if (message.kind === "ready") resolve();
      else if (message.kind === "committed") settle(message.writes);
      else announceClosed();
    });
    thread.on("error", (error) => {
      fail(new WriterStoppedError(`The store's writer thread failed: ${error.message}`, { cause: error }));
      reject(stopped);
    });
    thread.on("exit", (code) => {
      fail(new WriterStoppedError(`The store's writer thread exited (code ${code})`));
      reject(stopped);
    });
  });
  await ready;
  started = true;

  function enqueue(commands: readonly WriteCommand[], lazy: boolean): Promise<unknown[]> {
    if (stopped) return Promise.reject(stopped);
    if (closing) return Promise.reject(new WriterStoppedError("The store is closing"));
    return new Promise((resolve, reject) => {
      unsent.push({ id: nextId++, commands, resolve, reject });
      if (sendScheduled) return;
      if (!lazy) {
        sendScheduled = true;
        setImmediate(send);
      } else {
        lazyTimer ??= setTimeout(send, lazyCommitMs);
      }
    });
  }

  return {
    stats,
    write: (...commands) => enqueue(commands, false) as Promise<never>,
    writeLazily: (...commands) => enqueue(commands, true) as Promise<never>,
    close() {
      closing ??= (async () => {
        if (!stopped) {
          send();
          thread.postMessage({ kind: "close" } satisfies ToWriter);
          await Promise.race([closed, exited]);
        }
        await exited;
      })();
      return closing;
    },
  };
}
