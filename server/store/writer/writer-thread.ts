// The writer thread's entry (bundled to build/store/writer-thread.js): it owns the service's only
// writing connection and commits what the service sends, in groups, off the service's event loop.
import { parentPort, workerData } from "node:worker_threads";
import { systemClock } from "../../clock.js";
import { openStore } from "../index.js";
import { makeGroupCommit } from "./commands.js";
import { makeSerialDrain } from "./serial-drain.js";
import { serializeError, toSettledWrite, type FromWriter, type ToWriter, type WriterThreadData } from "./protocol.js";

const port = parentPort!;
const { path, db } = workerData as WriterThreadData;
const store = await openStore(path, { clock: systemClock, ...db });
const commit = makeGroupCommit(store);
const send = (message: FromWriter) => port.postMessage(message);

// Writes that arrive while a commit runs (fsync included) queue up in the port and are delivered
// together before the next check phase: they then share one commit.
let queue: Extract<ToWriter, { kind: "write" }>["writes"] = [];
let scheduled = false;
const commits = makeSerialDrain(() => queue.length > 0, commitQueued);
function drain(): Promise<void> {
  scheduled = false;
  return commits.drain();
}

async function commitQueued(): Promise<void> {
  const batch = queue;
  queue = [];
  const outcomes = await commit(batch.map((write) => write.commands));
  const settled = batch.map((write, i) => toSettledWrite(write.id, outcomes[i]!));
  try {
    send({ kind: "committed", writes: settled });
  } catch {
    // A result that cannot be copied back (a bug in a command) fails its own caller, not the thread.
    for (const one of settled) {
      try {
        send({ kind: "committed", writes: [one] });
      } catch (error) {
        const cause = serializeError(error);
        send({
          kind: "committed",
          writes: [
            {
              id: one.id,
              ok: false,
              error: {
                ...cause,
                message: `The write was committed, but its result could not be sent back: ${cause.message}`,
              },
            },
          ],
        });
      }
    }
  }
}

port.on("message", (message: ToWriter) => {
  if (message.kind === "close") {
    void drain()
      .then(() => store.close())
      .then(() => {
        send({ kind: "closed" });
        port.close();
      });
    return;
  }
  for (const write of message.writes) queue.push(write);
  if (!scheduled && !commits.running) {
    scheduled = true;
    setImmediate(() => void drain());
  }
});

send({ kind: "ready" });
