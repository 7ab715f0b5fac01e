import type { Sql } from "./sql/sql.js";
import type { Filter, ListPage, PageRequest, RowPage } from "./pagination.js";

export interface AuditEventRow {
  audit_event_id: string;
  created_at: string;
  actor_type: "api_key" | "cli" | "github_oidc";
  actor_key_id: string | null;
  actor_label: string | null;
  action: string;
  resource_id: string | null;
  project_id: string | null;
  request_id: string | null;
  client_address: string | null;
}

export interface AuditEventFilter {
  project_id?: string | undefined;
  /** A key id, or `cli` for the operator's command line. */
  actor?: string | undefined;
  action?: string | undefined;
  resource_id?: string | undefined;
  since?: string | undefined;
}

/** The audit trail: appended with the writes it records, never changed (the table's triggers refuse it). */
export function makeAuditEventsStore(db: Sql, listPage: ListPage) {
  const insert =
    db.prepare(`INSERT INTO audit_events (audit_event_id, created_at, actor_type, actor_key_id, actor_label, action, resource_id, project_id, request_id, client_address)
    VALUES (@audit_event_id, @created_at, @actor_type, @actor_key_id, @actor_label, @action, @resource_id, @project_id, @request_id, @client_address)`);
  return {
    reads: {
      async listAuditEvents(filter: AuditEventFilter, page: PageRequest): Promise<RowPage<AuditEventRow>> {
        const filters: Filter[] = [];
        if (filter.project_id) filters.push(["project_id = ?", filter.project_id]);
        if (filter.actor === "cli") filters.push(["actor_type = ?", "cli"]);
        else if (filter.actor) filters.push(["actor_key_id = ?", filter.actor]);
        if (filter.action) filters.push(["action = ?", filter.action]);
        if (filter.resource_id) filters.push(["resource_id = ?", filter.resource_id]);
        if (filter.since) filters.push(["created_at >= ?", filter.since]);
        return listPage<AuditEventRow>("audit_events", "audit_event_id", filters, page);
      },
    },
    writes: {
      /**
       * Writes nothing but the request's audit event, naming what the request led to (`made`: the
       * ids, `created: false` when it only found them): for a request whose work was written by
       * others — a commit the GitHub App gated at an API client's request.
       */
      async acknowledgeRequest<T extends object>(made: T): Promise<T> {
        return made;
      },
      /**
       * Appends an event. Appended as the last command of a write, it is given what the write's
       * other commands returned (`earlier`): a created resource's id (`createdIdKey`) and its
       * project are read there, as the write decided them (a new id, or an existing spec's).
       */
      async appendAuditEvent(
        event: AuditEventRow,
        createdIdKey?: string,
        earlier: readonly unknown[] = [],
      ): Promise<void> {
        if (earlier.length > 0 && didNothing(earlier[0])) return;
        const created = createdIdKey && findString(earlier, createdIdKey);
        await insert.run({
          ...event,
          resource_id: created || event.resource_id,
          project_id: event.project_id ?? findString(earlier, "project_id") ?? null,
        });
      },
    },
  };
}

/** Outcomes by which a write says it changed nothing: a replay, a conflict, a refusal. */
const NOTHING_DONE = new Set(["replay", "key_reused", "quota_exceeded", "bound_elsewhere"]);

/**
 * Whether a write command's result says it did nothing: the store's writes answer undefined, null
 * or false when there was nothing to change (not found, a name taken), `created: false` when what
 * was asked exists already, or an outcome `kind` of NOTHING_DONE. Such a write leaves no audit event.
 */
function didNothing(result: unknown): boolean {
  if (result === undefined || result === null || result === false) return true;
  if (typeof result !== "object") return false;
  const { created, kind } = result as { created?: unknown; kind?: unknown };
  return created === false || (typeof kind === "string" && NOTHING_DONE.has(kind));
}

/** The first string property `key` in `values`, or in their objects down to three levels. */
function findString(values: readonly unknown[], key: string): string | undefined {
  const search = (value: unknown, depth: number): string | undefined => {
    if (value === null || typeof value !== "object" || depth > 3) return undefined;
    const own = (value as Record<string, unknown>)[key];
    if (typeof own === "string") return own;
    for (const inner of Object.values(value)) {
      const found = search(inner, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  for (const value of values) {
    const found = search(value, 0);
    if (found) return found;
  }
  return undefined;
}
