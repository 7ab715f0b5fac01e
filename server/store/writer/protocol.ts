import type { OpenStoreOptions } from "../index.js";
import type { WriteCommand, WriteOutcome } from "./commands.js";

/** What the writer thread is started with. */
export interface WriterThreadData {
  path: string;
  db: Omit<OpenStoreOptions, "clock">;
}

/** Messages to the writer thread. */
export type ToWriter =
  { kind: "write"; writes: { id: number; commands: readonly WriteCommand[] }[] } | { kind: "close" };

/** An error as it crosses the thread boundary: its class is lost, its name, message and code are kept. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string | undefined;
  stack?: string | undefined;
}

export type SettledWrite = { id: number } & ({ ok: true; values: unknown[] } | { ok: false; error: SerializedError });

/** Messages from the writer thread. */
export type FromWriter = { kind: "ready" } | { kind: "committed"; writes: SettledWrite[] } | { kind: "closed" };

export function serializeError(raw: unknown): SerializedError {
  if (!(raw instanceof Error)) return { name: "Error", message: String(raw) };
  const code = (raw as { code?: unknown }).code;
  return { name: raw.name, message: raw.message, code: typeof code === "string" ? code : undefined, stack: raw.stack };
}

export function toSettledWrite(id: number, outcome: WriteOutcome): SettledWrite {
  return outcome.ok
    ? { id, ok: true, values: outcome.values }
    : { id, ok: false, error: serializeError(outcome.error) };
}
