import { AsyncLocalStorage } from "node:async_hooks";
import type { AuditEventRow } from "./index.js";
import type { WriteCommand } from "./writer/commands.js";

/**
 * A write request's audit event, waiting for the request's first write: it is appended to that
 * write's commands, so the event commits with what it records, or not at all (a refused or failed
 * write leaves no event). The id of a created resource is known only there: the store reads it from
 * what the write's other commands returned (`createdIdKey`, e.g. `project_id`).
 */
export interface PendingAuditEvent {
  event: AuditEventRow;
  createdIdKey: string | undefined;
  recorded: boolean;
}

const scope = new AsyncLocalStorage<PendingAuditEvent>();

/** Runs `work` (a route's handler) with `pending` as the audit event of the writes it makes. */
export function withAuditEvent<T>(pending: PendingAuditEvent, work: () => T): T {
  return scope.run(pending, work);
}

/** Runs `work` outside any request's audit scope: what it writes (the engine, say) is not the request's. */
export function outsideAudit<T>(work: () => T): T {
  return scope.exit(work);
}

/** The commands of a write, with the request's audit event appended if this is its first write. */
export function withPendingAudit(commands: readonly WriteCommand[]): readonly WriteCommand[] {
  const pending = scope.getStore();
  if (!pending || pending.recorded) return commands;
  pending.recorded = true;
  return [...commands, ["appendAuditEvent", pending.event, pending.createdIdKey]];
}
