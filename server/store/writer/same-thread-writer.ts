import type { Store } from "../index.js";
import { makeGroupCommit, type WriteCommand } from "./commands.js";
import { makeSerialDrain } from "./serial-drain.js";
import { WriterStoppedError, type Writer } from "./start-writer.js";

interface Pending {
  commands: readonly WriteCommand[];
  resolve(values: unknown[]): void;
  reject(error: unknown): void;
}

/**
 * The writer of a process that has no event loop to keep free (`assure test`): the same group
 * commits as the writer thread (writes made in one turn share a commit, each in its own
 * savepoint; a lazy write waits for the next one), on the store's own connection in this thread.
 * It saves the thread's start (a second V8 isolate loading the store) and its memory.
 */
export function makeSameThreadWriter(store: Store, { lazyCommitMs = 20 }: { lazyCommitMs?: number } = {}): Writer {
  const commit = makeGroupCommit(store);
  let queue: Pending[] = [];
  let scheduled = false;
  let lazyTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const stats = { commits: 0, writes: 0, queued: 0, inFlight: 0, busyMs: 0 };

  const commits = makeSerialDrain(() => queue.length > 0, commitQueued);
  function drain(): Promise<void> {
    scheduled = false;
    clearTimeout(lazyTimer);
    lazyTimer = undefined;
    return commits.drain();
  }

  async function commitQueued(): Promise<void> {
    const batch = queue;
    queue = [];
    const started = performance.now();
    const outcomes = await commit(batch.map((write) => write.commands));
    stats.busyMs += performance.now() - started;
    stats.commits++;
    stats.writes += batch.length;
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.values);
      else write.reject(outcome.error);
    });
  }

  function enqueue(commands: readonly WriteCommand[], lazy: boolean): Promise<unknown[]> {
    if (closed) return Promise.reject(new WriterStoppedError("The store is closed"));
    return new Promise((resolve, reject) => {
      queue.push({ commands, resolve, reject });
      if (scheduled || commits.running) return;
      if (!lazy) {
        scheduled = true;
        setImmediate(() => void drain());
      } else {
        lazyTimer ??= setTimeout(() => void drain(), lazyCommitMs);
      }
    });
  }

  return {
    stats: {
      get commits() {
        return stats.commits;
      },
      get writes() {
        return stats.writes;
      },
      get queued() {
        return queue.length;
      },
      inFlight: 0,
      get busyMs() {
        return stats.busyMs;
      },
    },
    write: (...commands) => enqueue(commands, false) as Promise<never>,
    writeLazily: (...commands) => enqueue(commands, true) as Promise<never>,
    async close() {
      closed = true;
      await drain();
    },
  };
}
