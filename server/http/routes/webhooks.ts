import { randomBytes } from "node:crypto";
import { z } from "zod";
import {
  CreateWebhookBody,
  RecoverWebhookBody,
  RecoverWebhookResult,
  ResourceId,
  UpdateWebhookBody,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryQuery,
  WebhookList,
  WebhookWithSecret,
  webhookPath,
} from "../../contract/index.js";
import { resolveProjectId } from "../../auth/authenticate.js";
import { visibleOr404 } from "../../auth/visibility.js";
import { ApiError } from "../../errors.js";
import type { AttemptRow, WebhookRow } from "../../store/index.js";
import { principalOf, type Api, type ApiDeps } from "../context.js";
import { responses } from "../schemas.js";
import { registerProjectResource } from "./project-resource.js";

/** How long a rotated secret still signs beside the new one. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function toWebhook(row: WebhookRow): Webhook {
  return {
    webhook_id: row.webhook_id,
    project_id: row.project_id,
    url: row.url,
    event_types: row.event_types,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since,
    secret_rotated_at: row.previous_secret_until
      ? new Date(Date.parse(row.previous_secret_until) - ROTATION_OVERLAP_MS).toISOString()
      : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    links: { self: webhookPath(row.webhook_id), deliveries: `${webhookPath(row.webhook_id)}/deliveries` },
  };
}

const toAttempt = (row: AttemptRow) => ({
  delivery_id: row.delivery_id,
  attempt: row.attempt,
  event_id: row.event_id,
  event_type: row.event_type,
  attempted_at: row.attempted_at,
  response_status: row.response_status,
  duration_ms: row.duration_ms,
  error: row.error,
  next_attempt_at: row.next_attempt_at,
});

/** `whsec_` and 32 random bytes in base64, as the Standard Webhooks libraries take it. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

const WebhookParams = z.strictObject({ webhook_id: ResourceId });
const tags = ["webhooks"];

/**
 * Outbound webhooks: endpoints per project that receive its runs' events and its decisions'
 * updates, signed per Standard Webhooks, with every attempt listed, and ways to send again.
 */
export function registerWebhookRoutes(api: Api, deps: ApiDeps) {
  const { store, clock, newId, egress, cursors } = deps;
  const now = () => clock.now().toISOString();
  const reachable = (url: string) => {
    const refused = egress.checkHost(new URL(url).hostname);
    if (refused) {
      throw new ApiError("WEBHOOK_URL_NOT_ALLOWED", {
        message: "The webhook's url may not be reached from this service.",
        details: [{ path: "body.url", message: refused }],
      });
    }
  };
  const visibleWebhook = async (request: Parameters<typeof principalOf>[0], id: string) =>
    visibleOr404(principalOf(request), await store.getWebhookRow(id), "Webhook", id);

  api.post("/v1/webhooks", {
    config: {
      scope: "webhooks:write",
      creates: "webhook_id",
      location: true,
      errors: ["PROJECT_ID_REQUIRED", "NOT_FOUND", "WEBHOOK_URL_NOT_ALLOWED"],
    },
    schema: {
      operationId: "createWebhook",
      tags,
      summary: "Register an endpoint for the project's events; its signing secret is in this answer only",
      body: CreateWebhookBody,
      response: responses({ 201: WebhookWithSecret }),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const projectId = resolveProjectId(principal, request.body.project_id);
      visibleOr404(principal, await store.getProject(projectId), "Project", projectId);
      reachable(request.body.url);
      const secret = newSecret();
      const [row] = await store.write([
        "createWebhook",
        {
          webhook_id: newId("webhook"),
          project_id: projectId,
          url: request.body.url,
          event_types: request.body.event_types ?? null,
          description: request.body.description ?? null,
          secret,
        },
        now(),
      ]);
      const webhook = toWebhook(row as WebhookRow);
      return reply
        .code(201)
        .header("location", webhook.links.self)
        .send({ ...webhook, secret });
    },
  });

  registerProjectResource(api, deps, {
    name: "webhook",
    scope: "webhooks:read",
    list: {
      response: WebhookList,
      items: async (filter, page) => {
        const { rows, next } = await store.listWebhooks(filter, page);
        return { rows: rows.map(toWebhook), next };
      },
    },
    get: { response: Webhook, row: store.getWebhookRow, toItem: toWebhook },
  });

  api.patch("/v1/webhooks/:webhook_id", {
    config: { scope: "webhooks:write", errors: ["WEBHOOK_URL_NOT_ALLOWED"] },
    schema: {
      operationId: "updateWebhook",
      tags,
      summary: "Change an endpoint's url, event types or description, or enable or disable it",
      params: WebhookParams,
      body: UpdateWebhookBody,
      response: responses({ 200: Webhook }),
    },
    handler: async (request) => {
      const current = await visibleWebhook(request, request.params.webhook_id);
      const { body } = request;
      if (body.url) reachable(body.url);
      const [row] = await store.write([
        "updateWebhook",
        current.webhook_id,
        {
          url: body.url ?? current.url,
          event_types: body.event_types === undefined ? current.event_types : body.event_types,
          description: body.description === undefined ? current.description : body.description,
          enabled: body.enabled ?? current.enabled,
          disabled_reason: body.enabled === false ? "disabled by a request" : null,
        },
        now(),
      ]);
      if (!row) throw new ApiError("NOT_FOUND", { message: `Webhook '${current.webhook_id}' was not found.` });
      return toWebhook(row as WebhookRow);
    },
  });

  api.delete("/v1/webhooks/:webhook_id", {
    config: { scope: "webhooks:write" },
    schema: {
      operationId: "deleteWebhook",
      tags,
      summary: "Stop sending to an endpoint; its deliveries stay listed",
      params: WebhookParams,
      response: responses({ 204: z.null() }),
    },
    handler: async (request, reply) => {
      const current = await visibleWebhook(request, request.params.webhook_id);
      await store.write(["deleteWebhook", current.webhook_id, now()]);
      return reply.code(204).send(null);
    },
  });

  api.post("/v1/webhooks/:webhook_id/rotate-secret", {
    config: { scope: "webhooks:write" },
    schema: {
      operationId: "rotateWebhookSecret",
      tags,
      summary: "A new signing secret, shown once; the old one signs beside it for 24 hours (two v1 signatures)",
      params: WebhookParams,
      response: responses({ 200: WebhookWithSecret }),
    },
    handler: async (request) => {
      const current = await visibleWebhook(request, request.params.webhook_id);
      const secret = newSecret();
      const at = clock.now();
      const [row] = await store.write([
        "rotateWebhookSecret",
        current.webhook_id,
        secret,
        new Date(at.getTime() + ROTATION_OVERLAP_MS).toISOString(),
        at.toISOString(),
      ]);
      return { ...toWebhook(row as WebhookRow), secret };
    },
  });

  api.get("/v1/webhooks/:webhook_id/deliveries", {
    config: { scope: "webhooks:read" },
    schema: {
      operationId: "listWebhookDeliveries",
      tags,
      summary: "Every attempt at sending the endpoint an event, newest first",
      params: WebhookParams,
      querystring: WebhookDeliveryQuery,
      response: responses({ 200: WebhookDeliveryList }),
    },
    handler: async (request) => {
      const webhook = await visibleWebhook(request, request.params.webhook_id);
      const { limit, cursor, ...filter } = request.query;
      const scope = `webhook-deliveries|${webhook.webhook_id}|${filter.event_id ?? ""}|${filter.event_type ?? ""}|${filter.outcome ?? ""}|${filter.since ?? ""}`;
      const position = cursor === undefined ? undefined : cursors.decode(cursor, scope);
      const after = position && {
        attempted_at: position.created_at,
        delivery_id: position.id.split(":")[0]!,
        attempt: Number(position.id.split(":")[1]),
      };
      const rows = await store.listWebhookAttempts(webhook.webhook_id, filter, after, limit + 1);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const more = rows.length > limit && last !== undefined;
      return {
        data: page.map(toAttempt),
        next_cursor: more
          ? cursors.encode({ created_at: last.attempted_at, id: `${last.delivery_id}:${last.attempt}` }, scope)
          : null,
        has_more: more,
      };
    },
  });

  api.post("/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver", {
    config: { scope: "webhooks:write" },
    schema: {
      operationId: "redeliverWebhookDelivery",
      tags,
      summary: "Send a delivery's event again, at once",
      params: z.strictObject({ webhook_id: ResourceId, delivery_id: ResourceId }),
      response: responses({ 202: WebhookDelivery }),
    },
    handler: async (request, reply) => {
      const webhook = await visibleWebhook(request, request.params.webhook_id);
      if (!(await store.getWebhookDelivery(webhook.webhook_id, request.params.delivery_id))) {
        throw new ApiError("NOT_FOUND", { message: `Delivery '${request.params.delivery_id}' was not found.` });
      }
      const [row] = await store.write([
        "redeliverWebhookDelivery",
        webhook.webhook_id,
        request.params.delivery_id,
        now(),
      ]);
      const delivery = row as NonNullable<Awaited<ReturnType<typeof store.getWebhookDelivery>>>;
      return reply.code(202).send({
        delivery_id: delivery.delivery_id,
        webhook_id: delivery.webhook_id,
        event_id: delivery.event_id,
        event_type: delivery.event_type,
        status: delivery.status,
        attempts: delivery.attempts,
        next_attempt_at: delivery.next_attempt_at,
      });
    },
  });

  api.post("/v1/webhooks/:webhook_id/recover", {
    config: { scope: "webhooks:write" },
    schema: {
      operationId: "recoverWebhook",
      tags,
      summary: "Send again every event of the project since a time (of the types the endpoint takes)",
      params: WebhookParams,
      body: RecoverWebhookBody,
      response: responses({ 202: RecoverWebhookResult }),
    },
    handler: async (request, reply) => {
      const webhook = await visibleWebhook(request, request.params.webhook_id);
      const since = new Date(request.body.since).toISOString();
      const [requeued] = await store.write(["recoverWebhook", webhook.webhook_id, since, now()]);
      return reply.code(202).send({ requeued: requeued as number });
    },
  });
}
