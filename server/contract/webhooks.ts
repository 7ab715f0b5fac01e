import { z } from "zod";
import { OwningProject, PageQuery, ResourceId, Timestamp, listOf, uniqueItems } from "./common.js";
import { RUN_EVENT_TYPES, type RunEventType } from "./events.js";
import { DECISION_EVENT_TYPES, DecisionEventEnvelope, type DecisionEventType } from "./releases.js";
import { RunEventEnvelope } from "./trace.js";
import { HTTP_URL_WITH_QUERY_PATTERN } from "./url-syntax.js";

/** Every event type a webhook can be sent: each run event of the trace, and a decision's updates. */
export const WEBHOOK_EVENT_TYPES = [...RUN_EVENT_TYPES, ...DECISION_EVENT_TYPES] as [
  RunEventType | DecisionEventType,
  ...(RunEventType | DecisionEventType)[],
];
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const WebhookUrl = z
  .url({ protocol: /^https?$/, error: "must be an http or https URL" })
  .max(2048)
  // zod runs refinements after a failed check too: they must not assume a valid URL.
  .refine(
    (url) => !URL.canParse(url) || (!new URL(url).username && !new URL(url).password),
    "credentials in the URL are not allowed",
  )
  .refine((url) => !URL.canParse(url) || !new URL(url).hash, "must not have a fragment")
  .meta({ pattern: HTTP_URL_WITH_QUERY_PATTERN });

const EventTypes = uniqueItems(
  z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).max(WEBHOOK_EVENT_TYPES.length),
  "an event type is listed twice",
).describe("The event types to send; every type when left out");

export const Webhook = z
  .object({
    webhook_id: z.string(),
    project_id: z.string(),
    url: z.string(),
    event_types: z.array(z.string()).nullable().describe("null: every event type"),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .describe("Why it was disabled: a 410 from the receiver, days of failures, or by a request"),
    failing_since: Timestamp.nullable().describe("Since when every attempt has failed; null while it delivers"),
    secret_rotated_at: Timestamp.nullable().describe(
      "When the secret was last rotated; the old one signs beside it for 24 hours",
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
    links: z.object({ self: z.string(), deliveries: z.string() }),
  })
  .meta({ id: "Webhook" });
export type Webhook = z.infer<typeof Webhook>;

export const WebhookWithSecret = Webhook.extend({
  secret: z
    .string()
    .describe("whsec_ + base64 of 32 random bytes: shown once, here; the receiver verifies signatures with it"),
}).meta({ id: "WebhookWithSecret" });

export const CreateWebhookBody = z
  .strictObject({
    project_id: OwningProject,
    url: WebhookUrl,
    event_types: EventTypes.optional(),
    description: z.string().max(500).optional(),
  })
  .meta({ id: "CreateWebhookBody" });

export const UpdateWebhookBody = z
  .strictObject({
    url: WebhookUrl.optional(),
    event_types: EventTypes.nullable().optional().describe("null: every event type"),
    description: z.string().max(500).nullable().optional(),
    enabled: z.boolean().optional().describe("true enables it again (and clears why it was disabled)"),
  })
  .refine((body) => Object.keys(body).length > 0, "name at least one field to change")
  .meta({ id: "UpdateWebhookBody", minProperties: 1 });

export const WebhookList = listOf(Webhook).meta({ id: "WebhookList" });

/** One attempt at delivering an event to an endpoint. */
export const WebhookDeliveryAttempt = z
  .object({
    delivery_id: z.string(),
    attempt: z.number().int().describe("1 for the first"),
    event_id: z.string().describe("The webhook-id header: the same on every attempt of the event"),
    event_type: z.string(),
    attempted_at: Timestamp,
    response_status: z
      .number()
      .int()
      .nullable()
      .describe("null when no response came (refused, timed out, unreachable)"),
    duration_ms: z.number(),
    error: z.string().nullable(),
    next_attempt_at: Timestamp.nullable().describe("When it is tried again; null once delivered or given up"),
  })
  .meta({ id: "WebhookDeliveryAttempt" });

export const WebhookDeliveryList = listOf(WebhookDeliveryAttempt).meta({ id: "WebhookDeliveryList" });

export const WebhookDeliveryQuery = PageQuery.extend({
  event_id: ResourceId.optional(),
  event_type: z.string().max(100).optional(),
  outcome: z.enum(["delivered", "failed"]).optional().describe("delivered: a 2xx answer; failed: anything else"),
  since: z.iso.datetime({ offset: true }).optional().describe("Attempts at or after this time"),
});

export const WebhookDelivery = z
  .object({
    delivery_id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
  })
  .meta({ id: "WebhookDelivery" });

export const RecoverWebhookBody = z
  .strictObject({
    since: z.iso.datetime({ offset: true }).describe("Every event of the project since this time is sent again"),
  })
  .meta({ id: "RecoverWebhookBody" });

export const RecoverWebhookResult = z
  .object({ requeued: z.number().int().describe("Deliveries queued to be sent again, at once") })
  .meta({ id: "RecoverWebhookResult" });

export const webhookPath = (webhookId: string) => `/v1/webhooks/${webhookId}`;

/** What a webhook's body holds: a run's event (the trace envelope) or a decision's update. */
export const WebhookEvent = z.union([RunEventEnvelope, DecisionEventEnvelope]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
