import { z } from "zod";
import { PageQuery, ResourceId, Timestamp, listOf } from "./common.js";

export const AUDIT_ACTOR_TYPES = ["api_key", "cli", "github_oidc"] as const;

/** One write, as the audit trail keeps it: who, what, on which resource, when and from where. */
export const AuditEvent = z
  .object({
    audit_event_id: z.string(),
    occurred_at: Timestamp,
    actor: z
      .object({
        type: z
          .enum(AUDIT_ACTOR_TYPES)
          .describe(
            "api_key: a request with an API key; cli: the operator's command line; github_oidc: a workflow exchanging its OIDC token",
          ),
        key_id: z
          .string()
          .nullable()
          .describe(
            "The API key that made the request (api_key), or the key a CLI command or an exchange issued or revoked",
          ),
        label: z.string().nullable().describe("The key's name, the workflow's repository, or the CLI command"),
      })
      .meta({ id: "AuditActor" }),
    action: z
      .string()
      .describe("The operation, by its operationId (e.g. createRun, createWaiver) or CLI command (e.g. keys.create)"),
    resource_id: z.string().nullable(),
    project_id: z.string().nullable(),
    request_id: z.string().nullable().describe("The request's X-Request-Id; null for a CLI command"),
    client_address: z.string().nullable(),
  })
  .meta({ id: "AuditEvent" });
export type AuditEvent = z.infer<typeof AuditEvent>;

export const AuditEventList = listOf(AuditEvent).meta({ id: "AuditEventList" });

export const AuditEventQuery = PageQuery.extend({
  project_id: ResourceId.optional(),
  actor: z.string().min(1).max(100).optional().describe("A key id, or `cli`"),
  action: z.string().min(1).max(100).optional(),
  resource_id: ResourceId.optional(),
  since: z.iso.datetime({ offset: true }).optional().describe("Events at or after this time"),
});
