import type { Sealer } from "../secrets/sealer.js";
import type { Sql } from "./sql/sql.js";
import type { ListPage, PageRequest, RowPage } from "./pagination.js";
import { makeProjectTable } from "./project-table.js";
import { SEALED_AT } from "./sealing.js";

export interface WebhookRow {
  webhook_id: string;
  project_id: string;
  url: string;
  /** The event types it is sent; null: every type. */
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  /** Sealed. */
  secret: string;
  /** Sealed; signs beside the current one until `previous_secret_until`. */
  previous_secret: string | null;
  previous_secret_until: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** The row as stored: the event types are JSON, enabled is 0 or 1. */
interface DbWebhook extends Omit<WebhookRow, "event_types" | "enabled"> {
  event_types: string | null;
  enabled: 0 | 1;
}

const fromDb = (row: DbWebhook): WebhookRow => ({
  ...row,
  event_types: row.event_types === null ? null : (JSON.parse(row.event_types) as string[]),
  enabled: row.enabled === 1,
});

const eventTypesColumn = (eventTypes: readonly string[] | null) =>
  eventTypes === null ? null : JSON.stringify(eventTypes);

export interface DeliveryRow {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_source: "run" | "decision";
  event_type: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  created_at: string;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  webhook_id: string;
  attempted_at: string;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
  next_attempt_at: string | null;
  /** Joined. */
  event_id: string;
  event_type: string;
}

/** What an attempt came to, and what follows from it. */
export interface AttemptOutcome {
  delivery_id: string;
  /** The lease the attempt was made under (its claim's `lease_until`). */
  lease_until: string;
  attempted_at: string;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
  /** When to try again; null: settled (delivered, or given up). */
  next_attempt_at: string | null;
  delivered: boolean;
  /** Disable the endpoint, for this reason (a 410, or failing for days). */
  disable: string | null;
  /** On a failure: how long the endpoint pauses after its 1st, 2nd… failure in a row (the last one on and on). */
  pause_ms?: readonly number[] | undefined;
}

/** An endpoint with deliveries due, as a claim sees it. */
export interface DueEndpoint {
  webhook_id: string;
  /** Its attempts have been failing (since failing_since). */
  failing: boolean;
  /** When its deliveries were last claimed; null: never. */
  last_claimed_at: string | null;
}

/**
 * Webhooks and their outbox. An event's deliveries are written by the write that records the
 * event (`enqueue…`, called in its transaction), so none is lost; the delivery worker claims the
 * due ones under a lease, and records each attempt with what follows from it.
 */
export function makeWebhooksStore(db: Sql, listPage: ListPage, sealer: Sealer) {
  const d = db.dialect;
  const DELIVERY_ID = `'dlv_' || ${d.randomHex(13)}`;
  const webhooks = makeProjectTable<DbWebhook, WebhookRow>(db, listPage, "live_webhooks", "webhook_id", fromDb);
  const insert =
    db.prepare(`INSERT INTO webhooks (webhook_id, project_id, url, event_types, description, enabled, secret, created_at, updated_at)
    VALUES (@webhook_id, @project_id, @url, @event_types, @description, 1, @secret, @now, @now)`);
  const update =
    db.prepare(`UPDATE webhooks SET url = @url, event_types = @event_types, description = @description, enabled = CAST(@enabled AS INTEGER),
      disabled_reason = CASE WHEN CAST(@enabled AS INTEGER) = 1 THEN NULL ELSE coalesce(@disabled_reason, disabled_reason) END,
      failing_since = CASE WHEN CAST(@enabled AS INTEGER) = 1 AND enabled = 0 THEN NULL ELSE failing_since END, updated_at = @now
    WHERE webhook_id = @webhook_id AND deleted_at IS NULL`);
  const remove = db.prepare(
    "UPDATE webhooks SET deleted_at = @now, enabled = 0, updated_at = @now WHERE webhook_id = @webhook_id AND deleted_at IS NULL",
  );
  const rotate =
    db.prepare(`UPDATE webhooks SET previous_secret = secret, previous_secret_until = @until, secret = @secret, updated_at = @now
    WHERE webhook_id = @webhook_id AND deleted_at IS NULL`);
  const secretsOf = db.prepare(
    "SELECT secret, previous_secret, previous_secret_until FROM webhooks WHERE webhook_id = ?",
  );

  // The outbox: one delivery per subscribed, enabled endpoint of the event's project.
  const subscribed = `w.enabled = 1 AND w.deleted_at IS NULL AND (w.event_types IS NULL OR e.type IN (${d.jsonArrayValues("w.event_types")}))`;
  const enqueueRun =
    db.prepare(`INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_source, event_type, status, next_attempt_at, created_at)
    SELECT ${DELIVERY_ID}, w.webhook_id, e.event_id, 'run', e.type, 'pending', @now, @now
    FROM run_events e JOIN runs r ON r.run_id = e.run_id JOIN webhooks w ON w.project_id = r.project_id
    WHERE e.run_id = @run_id AND e.sequence BETWEEN @from AND @to AND ${subscribed}`);
  const enqueueDecision =
    db.prepare(`INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_source, event_type, status, next_attempt_at, created_at)
    SELECT ${DELIVERY_ID}, w.webhook_id, e.event_id, 'decision', e.type, 'pending', @now, @now
    FROM release_decision_events e JOIN release_decisions d ON d.decision_id = e.decision_id JOIN webhooks w ON w.project_id = d.project_id
    WHERE e.decision_id = @decision_id AND e.sequence = @sequence AND ${subscribed}`);
  const hasWebhooks = db.prepare("SELECT 1 FROM webhooks WHERE enabled = 1 LIMIT 1").pluck();

  // Claimed endpoint by endpoint, each no more than its room (`per_endpoint` less what it has in
  // flight): a hanging receiver cannot take every slot.
  // Live endpoints with a delivery due now, unless paused after failing.
  const dueEndpoints =
    db.prepare(`SELECT w.webhook_id, CASE WHEN w.failing_since IS NOT NULL THEN 1 ELSE 0 END AS failing, w.last_claimed_at FROM webhooks w
    WHERE w.enabled = 1 AND w.deleted_at IS NULL AND (w.paused_until IS NULL OR w.paused_until <= @now)
      AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= @now
        AND (d.lease_until IS NULL OR d.lease_until <= @now))`);
  const noteClaimed = db.prepare("UPDATE webhooks SET last_claimed_at = ? WHERE webhook_id = ?");
  const claimOf = db.prepare(`UPDATE webhook_deliveries SET lease_until = @lease_until
    WHERE delivery_id IN (
      SELECT delivery_id FROM webhook_deliveries
      WHERE webhook_id = @webhook_id AND status = 'pending' AND next_attempt_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_attempt_at LIMIT @room ${d.skipLocked})
    RETURNING *`);
  // Settled only under the lease the attempt was made under: once it lapsed and another claim took
  // the delivery, the late attempt is not recorded (the delivery is the new claim's to settle).
  const settle = db.prepare(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = @next_attempt_at,
      status = CASE WHEN @delivered = 1 THEN 'delivered' WHEN CAST(@next_attempt_at AS TEXT) IS NULL THEN 'failed' ELSE 'pending' END
    WHERE delivery_id = @delivery_id AND lease_until = @lease_until RETURNING webhook_id, attempts`,
  );
  const insertAttempt =
    db.prepare(`INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, attempted_at, response_status, duration_ms, error, next_attempt_at)
    VALUES (@delivery_id, @attempt, @webhook_id, @attempted_at, @response_status, @duration_ms, @error, @next_attempt_at)`);
  const markHealthy =
    db.prepare(`UPDATE webhooks SET failing_since = NULL, consecutive_failures = 0, paused_until = NULL
    WHERE webhook_id = ? AND (failing_since IS NOT NULL OR consecutive_failures > 0)`);
  const markFailing = db
    .prepare(
      `UPDATE webhooks SET failing_since = coalesce(failing_since, ?), consecutive_failures = consecutive_failures + 1
    WHERE webhook_id = ? RETURNING consecutive_failures`,
    )
    .pluck();
  const pause = db.prepare("UPDATE webhooks SET paused_until = ? WHERE webhook_id = ?");
  const disable = db.prepare(
    "UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE webhook_id = ? AND enabled = 1",
  );
  const failingSince = db.prepare("SELECT failing_since FROM webhooks WHERE webhook_id = ?").pluck();
  const nextDue = db
    .prepare("SELECT MIN(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'")
    .pluck();

  const runEvent = db.prepare("SELECT * FROM run_events WHERE event_id = ?");
  const decisionEvent = db.prepare("SELECT * FROM release_decision_events WHERE event_id = ?");
  const delivery = db.prepare("SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND delivery_id = ?");
  const requeue =
    db.prepare(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @now, lease_until = NULL
    WHERE webhook_id = @webhook_id AND delivery_id = @delivery_id RETURNING *`);
  const recoverRun =
    db.prepare(`INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_source, event_type, status, next_attempt_at, created_at)
    SELECT ${DELIVERY_ID}, w.webhook_id, e.event_id, 'run', e.type, 'pending', @now, @now
    FROM run_events e JOIN runs r ON r.run_id = e.run_id JOIN webhooks w ON w.project_id = r.project_id
    WHERE w.webhook_id = @webhook_id AND e.occurred_at >= @since AND ${subscribed.replace("w.enabled = 1 AND ", "")}`);
  const recoverDecision =
    db.prepare(`INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_source, event_type, status, next_attempt_at, created_at)
    SELECT ${DELIVERY_ID}, w.webhook_id, e.event_id, 'decision', e.type, 'pending', @now, @now
    FROM release_decision_events e JOIN release_decisions d ON d.decision_id = e.decision_id JOIN webhooks w ON w.project_id = d.project_id
    WHERE w.webhook_id = @webhook_id AND e.occurred_at >= @since AND ${subscribed.replace("w.enabled = 1 AND ", "")}`);
  // What recovery sends again stands in for what was sent before: the old deliveries of those events are settled.
  const supersede =
    db.prepare(`UPDATE webhook_deliveries SET status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END, next_attempt_at = NULL
    WHERE webhook_id = @webhook_id AND created_at < @now AND event_id IN (
      SELECT event_id FROM run_events WHERE occurred_at >= @since UNION ALL SELECT event_id FROM release_decision_events WHERE occurred_at >= @since)`);

  return {
    reads: {
      getWebhookRow: webhooks.get,
      /** When the earliest pending delivery is due (a leased one too); null when none is pending. */
      async nextWebhookDeliveryDue(): Promise<string | null> {
        return (await nextDue.get<string | null>()) ?? null;
      },
      /** The endpoints with a delivery to claim now (not paused), whether they are failing, and when they were last claimed. */
      async listDueWebhookEndpoints(now: string): Promise<DueEndpoint[]> {
        const rows = await dueEndpoints.all<Omit<DueEndpoint, "failing"> & { failing: 0 | 1 }>({ now });
        return rows.map((row) => ({ ...row, failing: row.failing === 1 }));
      },
      listWebhooks(filter: { project_id?: string | undefined }, page: PageRequest): Promise<RowPage<WebhookRow>> {
        return webhooks.list(filter, page);
      },
      /** The secrets that sign now: the current one, and the one it replaced while the overlap lasts. */
      async webhookSecrets(webhookId: string, now: string): Promise<string[]> {
        const row =
          await secretsOf.get<Pick<WebhookRow, "secret" | "previous_secret" | "previous_secret_until">>(webhookId);
        if (!row) return [];
        const at = SEALED_AT.webhookSecret(webhookId);
        const previous =
          row.previous_secret && row.previous_secret_until && row.previous_secret_until > now
            ? [sealer.open(row.previous_secret, at)]
            : [];
        return [sealer.open(row.secret, at), ...previous];
      },
      /** An event's row, where it was recorded. */
      getOutboxEvent(source: "run" | "decision", eventId: string): Promise<Record<string, unknown> | undefined> {
        return (source === "run" ? runEvent : decisionEvent).get<Record<string, unknown>>(eventId);
      },
      getWebhookDelivery(webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
        return delivery.get<DeliveryRow>(webhookId, deliveryId);
      },
      /** A page of an endpoint's attempts, newest first, with filters. */
      listWebhookAttempts(
        webhookId: string,
        filter: {
          event_id?: string | undefined;
          event_type?: string | undefined;
          outcome?: "delivered" | "failed" | undefined;
          since?: string | undefined;
        },
        after: { attempted_at: string; delivery_id: string; attempt: number } | undefined,
        limit: number,
      ): Promise<AttemptRow[]> {
        const where = ["a.webhook_id = @webhook_id"];
        if (filter.event_id) where.push("d.event_id = @event_id");
        if (filter.event_type) where.push("d.event_type = @event_type");
        if (filter.outcome === "delivered") where.push("a.response_status BETWEEN 200 AND 299");
        if (filter.outcome === "failed") {
          where.push("(a.response_status IS NULL OR a.response_status NOT BETWEEN 200 AND 299)");
        }
        if (filter.since) where.push("a.attempted_at >= @since");
        if (after) {
          where.push("(a.attempted_at, a.delivery_id, a.attempt) < (@after_at, @after_delivery, @after_attempt)");
        }
        return db
          .prepare(
            `SELECT a.*, d.event_id, d.event_type FROM webhook_attempts a JOIN webhook_deliveries d ON d.delivery_id = a.delivery_id
            WHERE ${where.join(" AND ")} ORDER BY a.attempted_at DESC, a.delivery_id DESC, a.attempt DESC LIMIT @limit`,
          )
          .all<AttemptRow>({
            webhook_id: webhookId,
            event_id: filter.event_id ?? null,
            event_type: filter.event_type ?? null,
            since: filter.since ?? null,
            after_at: after?.attempted_at ?? null,
            after_delivery: after?.delivery_id ?? null,
            after_attempt: after?.attempt ?? null,
            limit,
          });
      },
    },
    writes: {
      /** Creates an endpoint; its secret is sealed. */
      async createWebhook(
        row: Pick<WebhookRow, "webhook_id" | "project_id" | "url" | "event_types" | "description"> & { secret: string },
        now: string,
      ): Promise<WebhookRow> {
        await insert.run({
          ...row,
          event_types: eventTypesColumn(row.event_types),
          secret: sealer.seal(row.secret, SEALED_AT.webhookSecret(row.webhook_id)),
          now,
        });
        return (await webhooks.get(row.webhook_id))!;
      },
      async updateWebhook(
        webhookId: string,
        change: Pick<WebhookRow, "url" | "event_types" | "description" | "enabled"> & {
          disabled_reason?: string | null;
        },
        now: string,
      ): Promise<WebhookRow | undefined> {
        const { changes } = await update.run({
          ...change,
          event_types: eventTypesColumn(change.event_types),
          enabled: change.enabled ? 1 : 0,
          disabled_reason: change.disabled_reason ?? null,
          webhook_id: webhookId,
          now,
        });
        return changes === 1 ? webhooks.get(webhookId) : undefined;
      },
      /** Stops delivery to it; its deliveries and attempts are kept. */
      async deleteWebhook(webhookId: string, now: string): Promise<boolean> {
        return (await remove.run({ webhook_id: webhookId, now })).changes === 1;
      },
      /** A new secret; the old one signs beside it until `overlapUntil`. */
      async rotateWebhookSecret(
        webhookId: string,
        secret: string,
        overlapUntil: string,
        now: string,
      ): Promise<WebhookRow | undefined> {
        const { changes } = await rotate.run({
          webhook_id: webhookId,
          secret: sealer.seal(secret, SEALED_AT.webhookSecret(webhookId)),
          until: overlapUntil,
          now,
        });
        return changes === 1 ? webhooks.get(webhookId) : undefined;
      },
      /** In the transaction that appends a run's events: their deliveries. */
      async enqueueRunEvents(runId: string, from: number, to: number, now: string): Promise<void> {
        if ((await hasWebhooks.get()) === undefined) return; // most services have none: not even the join
        await enqueueRun.run({ run_id: runId, from, to, now });
      },
      /** In the transaction that appends a decision's event: its deliveries. */
      async enqueueDecisionEvent(decisionId: string, sequence: number, now: string): Promise<void> {
        if ((await hasWebhooks.get()) === undefined) return;
        await enqueueDecision.run({ decision_id: decisionId, sequence, now });
      },
      /** Takes due deliveries under a lease until `leaseUntil`: at most `limit`, and per endpoint `perEndpoint` less its `inFlight`. */
      /** Claims, of each endpoint, as many due deliveries as `allocation` gives it (oldest due first), and notes when. */
      async claimWebhookDeliveries(
        now: string,
        leaseUntil: string,
        allocation: Record<string, number>,
      ): Promise<DeliveryRow[]> {
        const claimed: DeliveryRow[] = [];
        for (const [webhookId, room] of Object.entries(allocation)) {
          const taken = await claimOf.all<DeliveryRow>({ webhook_id: webhookId, now, lease_until: leaseUntil, room });
          if (taken.length > 0) await noteClaimed.run(now, webhookId);
          claimed.push(...taken);
        }
        return claimed;
      },
      /**
       * Records an attempt and settles its delivery: delivered, to be tried again, or given up. The
       * endpoint is marked failing (since the first failure) or healthy, and disabled when asked.
       * Nothing is recorded (`recorded: false`) when the attempt's lease no longer holds the delivery.
       */
      async recordWebhookAttempt(
        outcome: AttemptOutcome,
      ): Promise<{ recorded: boolean; failing_since: string | null }> {
        const settled = await settle.get<{ webhook_id: string; attempts: number }>({
          ...outcome,
          delivered: outcome.delivered ? 1 : 0,
        });
        if (!settled) return { recorded: false, failing_since: null }; // its lease lapsed and the delivery moved on
        const webhookId = settled.webhook_id;
        await insertAttempt.run({ ...outcome, attempt: settled.attempts, webhook_id: webhookId });
        if (outcome.delivered) await markHealthy.run(webhookId);
        else {
          const failures = (await markFailing.get<number>(outcome.attempted_at, webhookId))!;
          const pauseMs = outcome.pause_ms?.[Math.min(failures, outcome.pause_ms.length) - 1];
          if (pauseMs) await pause.run(new Date(Date.parse(outcome.attempted_at) + pauseMs).toISOString(), webhookId);
        }
        if (outcome.disable) await disable.run(outcome.disable, outcome.attempted_at, webhookId);
        return { recorded: true, failing_since: (await failingSince.get<string | null>(webhookId)) ?? null };
      },
      async disableWebhook(webhookId: string, reason: string, now: string): Promise<void> {
        await disable.run(reason, now, webhookId);
      },
      /** Sends a delivery again, at once. */
      redeliverWebhookDelivery(webhookId: string, deliveryId: string, now: string): Promise<DeliveryRow | undefined> {
        return requeue.get<DeliveryRow>({ webhook_id: webhookId, delivery_id: deliveryId, now });
      },
      /** Queues every event of the endpoint's project since `since` again (the types it takes), at once. */
      async recoverWebhook(webhookId: string, since: string, now: string): Promise<number> {
        await supersede.run({ webhook_id: webhookId, since, now });
        const runs = await recoverRun.run({ webhook_id: webhookId, since, now });
        const decisions = await recoverDecision.run({ webhook_id: webhookId, since, now });
        return runs.changes + decisions.changes;
      },
    },
  };
}
