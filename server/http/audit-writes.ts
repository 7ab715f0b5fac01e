import type { FastifyRequest, RouteOptions } from "fastify";
import { withAuditEvent, type PendingAuditEvent } from "../store/audit-scope.js";
import type { ApiDeps } from "./context.js";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Every route that writes (any method but GET, HEAD, OPTIONS) runs its handler with an audit event
 * waiting for its first write: the operation (its operationId), who (the key, or the workflow
 * exchanging its OIDC token), on what, for which request and from where. New routes are audited
 * without being named here.
 */
export function auditWrites(route: RouteOptions, { newId, clock }: Pick<ApiDeps, "newId" | "clock">): void {
  if ([route.method].flat().every((method) => READS.has(method))) return;
  if (route.config?.audited === false) return;
  const action =
    (route.schema as { operationId?: string } | undefined)?.operationId ?? `${[route.method].flat()[0]} ${route.url}`;
  const createdIdKey = route.config?.creates;
  const handler = route.handler;
  route.handler = function audited(this: unknown, request, reply) {
    return withAuditEvent(
      pendingFor(request, action, createdIdKey, newId("auditEvent"), clock.now().toISOString()),
      () => handler.call(this as never, request, reply),
    );
  };
}

function pendingFor(
  request: FastifyRequest,
  action: string,
  createdIdKey: string | undefined,
  id: string,
  at: string,
): PendingAuditEvent {
  const principal = request.principal;
  const params = Object.values((request.params ?? {}) as Record<string, unknown>).filter(
    (value): value is string => typeof value === "string",
  );
  return {
    event: {
      audit_event_id: id,
      created_at: at,
      actor_type: principal ? "api_key" : "github_oidc",
      actor_key_id: principal?.key_id ?? null,
      actor_label: principal?.name ?? null,
      action,
      resource_id: params.at(-1) ?? null,
      project_id: principal?.project_id ?? null,
      request_id: request.id,
      client_address: request.ip,
    },
    createdIdKey,
    recorded: false,
  };
}
