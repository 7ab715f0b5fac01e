import type { Clock } from "../../server/clock.js";
import type { ServiceStore } from "../../server/store/service-store.js";

export const PROCESS_GITHUB_DELIVERY = "process_github_delivery";

export interface ReceivedDelivery {
  id: string;
  name: string;
  payload: { action?: string };
}

/**
 * Keeps a verified delivery and queues its processing, in one commit, before GitHub is answered:
 * GitHub does not redeliver by itself, and it waits 10 s. A delivery seen before — by its id, or
 * by its body under another id (the id is not signed) — is acknowledged and dropped. Returns
 * whether it was new.
 */
export async function receiveDelivery(
  { store, clock }: { store: ServiceStore; clock: Clock },
  delivery: ReceivedDelivery,
): Promise<boolean> {
  if (!delivery.id.trim()) throw new Error("A delivery without an id cannot be told from another: refused");
  const now = clock.now().toISOString();
  const [isNew] = await store.write([
    "receiveDelivery",
    {
      delivery_id: delivery.id,
      event: delivery.name,
      action: delivery.payload.action ?? null,
      payload: delivery.payload,
      received_at: now,
    },
    {
      task: PROCESS_GITHUB_DELIVERY,
      job_key: `${PROCESS_GITHUB_DELIVERY}:${delivery.id}`,
      payload: { delivery_id: delivery.id },
      run_at: now,
      max_attempts: 8,
    },
  ]);
  return isNew;
}
