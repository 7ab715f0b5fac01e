import { LRUCache } from "lru-cache";
import type { Clock } from "../clock.js";
import { coerceError } from "../errors.js";
import type { Logger } from "../log.js";
import { toRunEvent } from "../runs/read-models.js";
import { toDecisionEvent, type DecisionEventRow, type DeliveryRow, type EventRow } from "../store/index.js";
import type { AttemptOutcome } from "../store/webhooks.js";
import type { ServiceStore } from "../store/service-store.js";
import { DISABLE_AFTER_FAILING_MS, endpointPauses, nextAttemptAt } from "./retry-schedule.js";
import { allocateSlots } from "./fair-claims.js";
import { startSender } from "./sender.js";
import { makeTokenBucket } from "./token-bucket.js";

export interface WebhookDelivererOptions {
  store: ServiceStore;
  clock: Clock;
  /** The egress policy's allowlist (ASSURE_EGRESS_ALLOWLIST): applied where the deliveries are sent. */
  egressAllowlist: readonly string[];
  log: Logger;
  /** Shortens the retry schedule and the days after which a failing endpoint is disabled (ASSURE_WEBHOOK_RETRY_SCALE). */
  retryScale?: number;
  /** How long a claimed delivery is this deliverer's: longer than an attempt can take. */
  leaseMs?: number;
  /** An attempt's deadline (connecting, waiting and reading alike). */
  timeoutMs?: number;
  /** Attempts in flight at once, all endpoints together, per endpoint, and to failing endpoints together. */
  maxInFlight?: number;
  perEndpoint?: number;
  failingInFlight?: number;
  /** How often it looks for due deliveries when nothing woke it. */
  pollMs?: number;
  /**
   * Holding back while the API serves: at most `perSecond` attempts a second start while `busy()`
   * says so (0: no limit). Signing, sending and recording compete with the API for the same cores;
   * a backlog then drains at the API's quiet moments instead of slowing its callers.
   */
  pace?: { busy(): boolean; perSecond: number; now?: () => number };
}

/**
 * Sends the outbox's due deliveries, shared fairly among endpoints (fair-claims.ts): a slow
 * receiver holds at most `perEndpoint` attempts in flight, a failing one a single attempt and then
 * a pause, and failing ones together at most `failingInFlight`, so no number of dead receivers holds
 * up a healthy one; the API and the run engine only ever write the outbox, in their own
 * transactions, and never wait for a receiver. Every attempt is recorded with what follows: delivered (2xx), given up and the
 * endpoint disabled (410), or tried again on the schedule.
 */
export function makeWebhookDeliverer({
  store,
  clock,
  egressAllowlist,
  log,
  retryScale = 1,
  leaseMs = 30_000,
  timeoutMs = 15_000,
  maxInFlight = 64,
  perEndpoint = 16,
  failingInFlight = Math.max(1, Math.floor(maxInFlight / 4)),
  pollMs = 100,
  pace,
}: WebhookDelivererOptions) {
  const pacer = pace && pace.perSecond > 0 ? makeTokenBucket(pace.perSecond, pace.now) : undefined;
  const pauses = endpointPauses(retryScale);
  const inFlight = new Map<string, number>();
  // Signing and the HTTP exchanges happen on a thread of their own: the API's event loop only claims and records.
  const sender = startSender({ allowlist: egressAllowlist, maxSockets: perEndpoint * 4 });
  let total = 0;
  let running = false;
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  let stopped = false;
  /** Holding back for the API: woken only by its poll (or stop), not by each attempt's end. */
  let paced = false;

  // An event goes to every endpoint of its project: its body is made once (events never change).
  const bodies = new LRUCache<string, string>({ max: 1000 });
  async function bodyOf(delivery: DeliveryRow): Promise<string | undefined> {
    const known = bodies.get(delivery.event_id);
    if (known) return known;
    const row = await store.getOutboxEvent(delivery.event_source, delivery.event_id);
    if (!row) return undefined;
    const body = JSON.stringify(
      delivery.event_source === "run"
        ? toRunEvent(row as unknown as EventRow)
        : toDecisionEvent(row as unknown as DecisionEventRow),
    );
    bodies.set(delivery.event_id, body);
    return body;
  }

  // Attempts settle in batches: one write (one message to the writer, one commit) for those that end together.
  let batch: {
    outcome: AttemptOutcome;
    settled: (result: { failing_since: string | null }) => void;
    failed: (error: unknown) => void;
  }[] = [];
  function record(outcome: AttemptOutcome): Promise<{ failing_since: string | null }> {
    return new Promise((settled, failed) => {
      batch.push({ outcome, settled, failed });
      if (batch.length === 1) setImmediate(flush);
    });
  }
  function flush(): void {
    const taken = batch;
    batch = [];
    store.write(...taken.map(({ outcome }) => ["recordWebhookAttempt", outcome] as const)).then(
      (results) => taken.forEach((entry, i) => entry.settled(results[i] as { failing_since: string | null })),
      (error: unknown) => taken.forEach((entry) => entry.failed(error)),
    );
  }

  async function attempt(delivery: DeliveryRow): Promise<void> {
    const webhook = await store.getWebhookRow(delivery.webhook_id);
    // Disabled since it was claimed (a 410 to another attempt): left pending, for if it is enabled again.
    if (webhook?.enabled === false) return;
    const at = clock.now();
    const body = await bodyOf(delivery);
    const sent =
      webhook && body
        ? await sender.send({
            url: webhook.url,
            secrets: await store.webhookSecrets(webhook.webhook_id, at.toISOString()),
            eventId: delivery.event_id,
            at: at.toISOString(),
            body,
            timeoutMs,
          })
        : { status: null, error: !webhook ? "the endpoint was deleted" : "the event no longer exists", durationMs: 0 };
    if (stopped) return; // stopping: the lease lapses and the delivery is tried again
    const status = sent.status;
    let error = sent.error;
    const delivered = status !== null && status >= 200 && status < 300;
    if (!delivered && error === null) error = `the receiver answered ${status}`;
    const gone = status === 410;
    const next =
      delivered || gone || !webhook || !body ? null : nextAttemptAt(delivery.attempts + 1, clock.now(), retryScale);
    const outcome = {
      delivery_id: delivery.delivery_id,
      lease_until: delivery.lease_until!, // claimed: under this lease
      attempted_at: at.toISOString(),
      response_status: status,
      duration_ms: sent.durationMs,
      error,
      next_attempt_at: next,
      delivered,
      disable: gone ? "the receiver answered 410 Gone: it wants no more deliveries" : null,
      pause_ms: pauses,
    };
    const { failing_since } = await record(outcome);
    if (failing_since && clock.now().getTime() - Date.parse(failing_since) > DISABLE_AFTER_FAILING_MS * retryScale) {
      await store.write([
        "disableWebhook",
        delivery.webhook_id,
        `every attempt failed since ${failing_since}: disabled after 5 days`,
        clock.now().toISOString(),
      ]);
    }
  }

  function launch(delivery: DeliveryRow): void {
    total++;
    inFlight.set(delivery.webhook_id, (inFlight.get(delivery.webhook_id) ?? 0) + 1);
    void attempt(delivery)
      .catch((error: unknown) =>
        log.error(
          { err: coerceError(error), delivery_id: delivery.delivery_id },
          "A webhook attempt could not be recorded; it is tried again when its lease lapses",
        ),
      )
      .finally(() => {
        total--;
        const left = (inFlight.get(delivery.webhook_id) ?? 1) - 1;
        if (left === 0) inFlight.delete(delivery.webhook_id);
        else inFlight.set(delivery.webhook_id, left);
        if (!paced) wake?.();
      });
  }

  async function run(): Promise<void> {
    while (running) {
      paced = pacer !== undefined && pace!.busy();
      const allowed = paced ? pacer!.available() : Infinity;
      const room = Math.min(maxInFlight - total, allowed);
      const due = await store.nextWebhookDeliveryDue().catch((error: unknown) => {
        log.error({ err: coerceError(error) }, "Could not read when the next webhook delivery is due");
        return null; // looked at again after a poll
      });
      if (room > 0 && due !== null && due <= clock.now().toISOString()) {
        const now = clock.now();
        try {
          const lease = new Date(now.getTime() + leaseMs).toISOString();
          const due = await store.listDueWebhookEndpoints(now.toISOString());
          const allocation = allocateSlots(due, Object.fromEntries(inFlight), room, {
            total: maxInFlight,
            perEndpoint,
            failingTotal: failingInFlight,
          });
          const [claimed] = (await store.write([
            "claimWebhookDeliveries",
            now.toISOString(),
            lease,
            Object.fromEntries(allocation),
          ])) as [DeliveryRow[]];
          for (const delivery of claimed) launch(delivery);
          if (paced) pacer!.take(claimed.length);
          if (claimed.length === room && room < allowed) continue;
        } catch (error) {
          log.error({ err: coerceError(error) }, "Could not claim webhook deliveries");
        }
      }
      await new Promise<void>((resolve) => {
        // Paced, it looks once a poll for the tokens gathered meanwhile: no claim per finished attempt.
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      loop = run();
    },
    /** Something was written to the outbox: look now rather than at the next poll. */
    nudge(): void {
      if (!paced) wake?.();
    },
    async stop(): Promise<void> {
      running = false;
      stopped = true;
      wake?.();
      await loop;
      await sender.stop();
    },
  };
}

export type WebhookDeliverer = ReturnType<typeof makeWebhookDeliverer>;
