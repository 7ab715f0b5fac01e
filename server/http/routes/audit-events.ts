import { AuditEventList, AuditEventQuery, type AuditEvent } from "../../contract/index.js";
import type { AuditEventRow } from "../../store/index.js";
import { ApiError } from "../../errors.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { pageThrough } from "../paging.js";
import { responses } from "../schemas.js";

export const toAuditEvent = (row: AuditEventRow): AuditEvent => ({
  audit_event_id: row.audit_event_id,
  occurred_at: row.created_at,
  actor: { type: row.actor_type, key_id: row.actor_key_id, label: row.actor_label },
  action: row.action,
  resource_id: row.resource_id,
  project_id: row.project_id,
  request_id: row.request_id,
  client_address: row.client_address,
});

/** The audit trail, read-only: no route (and no command) changes or removes an event. */
export function registerAuditRoutes(api: Api, { store, cursors }: ApiDeps) {
  api.get("/v1/audit-events", {
    config: { scope: "audit:read", errors: ["NOT_FOUND"] },
    schema: {
      operationId: "listAuditEvents",
      tags: ["audit"],
      summary:
        "Every write through the API or the CLI, newest first: who, what, on which resource, when and from where (audit:read)",
      querystring: AuditEventQuery,
      response: responses({ 200: AuditEventList }),
    },
    handler: async (request) => {
      const principal = principalOf(request);
      const { limit, cursor, ...filter } = request.query;
      // A project's key reads its project's trail; an admin key reads every project's, or the one it names.
      if (
        principal.project_id !== null &&
        filter.project_id !== undefined &&
        filter.project_id !== principal.project_id
      ) {
        throw new ApiError("NOT_FOUND", { message: `Project '${filter.project_id}' was not found.` });
      }
      const project_id = principal.project_id ?? filter.project_id;
      const scope = `audit-events|${project_id ?? ""}|${filter.actor ?? ""}|${filter.action ?? ""}|${filter.resource_id ?? ""}|${filter.since ?? ""}`;
      const page = await pageThrough(cursors, scope, { limit, cursor }, (p) =>
        store.listAuditEvents({ ...filter, project_id }, p),
      );
      return { ...page, data: page.data.map(toAuditEvent) };
    },
  });
}
