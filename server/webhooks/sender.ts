import { Worker } from "node:worker_threads";

/** One delivery to sign and send. */
export interface SendRequest {
  id: number;
  url: string;
  /** The secrets that sign now (two while a rotation overlaps). */
  secrets: string[];
  eventId: string;
  /** When it is sent (webhook-timestamp), ISO. */
  at: string;
  body: string;
  timeoutMs: number;
}

export interface SendResult {
  id: number;
  /** null when no answer came (refused, timed out, unreachable). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

export type ToSender = { kind: "send"; request: SendRequest } | { kind: "stop" };

export interface SenderThreadData {
  allowlist: readonly string[];
  maxSockets: number;
}

/** The service runs from its bundle; tests run the sources, and use the bundle their global setup builds. */
const SENDER_THREAD_SCRIPT = new URL(
  import.meta.url.endsWith(".ts") ? "../../build/webhooks/sender-thread.js" : "../webhooks/sender-thread.js",
  import.meta.url,
);

/** The thread that signs and sends webhook deliveries (the egress policy applied there, at connect time). */
export function startSender(data: SenderThreadData) {
  const thread = new Worker(SENDER_THREAD_SCRIPT, {
    workerData: data,
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const waiting = new Map<number, (result: SendResult) => void>();
  let nextId = 1;
  let failure: Error | undefined;
  thread.on("message", (result: SendResult) => {
    waiting.get(result.id)?.(result);
    waiting.delete(result.id);
  });
  const fail = (error: Error) => {
    failure ??= error;
    for (const [id, resolve] of waiting) {
      resolve({ id, status: null, error: `the sender stopped: ${error.message}`, durationMs: 0 });
    }
    waiting.clear();
  };
  thread.on("error", fail);
  thread.on("exit", () => fail(new Error("its thread exited")));
  thread.unref();

  return {
    send(request: Omit<SendRequest, "id">): Promise<SendResult> {
      if (failure) {
        return Promise.resolve({ id: 0, status: null, error: `the sender stopped: ${failure.message}`, durationMs: 0 });
      }
      const id = nextId++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        thread.postMessage({ kind: "send", request: { ...request, id } } satisfies ToSender);
      });
    },
    async stop(): Promise<void> {
      if (failure) return;
      const exited = new Promise((resolve) => thread.once("exit", resolve));
      thread.postMessage({ kind: "stop" } satisfies ToSender);
      await exited;
    },
  };
}

export type Sender = ReturnType<typeof startSender>;
