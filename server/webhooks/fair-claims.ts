import type { DueEndpoint } from "../store/webhooks.js";

export interface SlotCaps {
  /** Attempts in flight at once, all endpoints together. */
  total: number;
  /** …per healthy endpoint. */
  perEndpoint: number;
  /** …to failing endpoints together: whatever their number, the rest stay for healthy ones. */
  failingTotal: number;
}

/**
 * How many deliveries to claim of each endpoint now: round after round, one each, healthy
 * endpoints first, then the failing ones (one in flight each, and no more than `failingTotal`
 * together); within each, the endpoint claimed least recently first. No endpoint, and no number of
 * dead endpoints, can keep another from its turn.
 */
export function allocateSlots(
  due: readonly DueEndpoint[],
  inFlight: Readonly<Record<string, number>>,
  room: number,
  caps: SlotCaps,
): Map<string, number> {
  const order = [...due].sort(
    (a, b) => Number(a.failing) - Number(b.failing) || (a.last_claimed_at ?? "").localeCompare(b.last_claimed_at ?? ""),
  );
  const given = new Map<string, number>();
  let failingHeld = due.reduce(
    (sum, endpoint) => sum + (endpoint.failing ? (inFlight[endpoint.webhook_id] ?? 0) : 0),
    0,
  );
  let left = Math.min(room, caps.total - Object.values(inFlight).reduce((sum, n) => sum + n, 0));
  for (let progress = true; left > 0 && progress;) {
    progress = false;
    for (const endpoint of order) {
      if (left === 0) break;
      const held = (inFlight[endpoint.webhook_id] ?? 0) + (given.get(endpoint.webhook_id) ?? 0);
      if (held >= (endpoint.failing ? 1 : caps.perEndpoint)) continue;
      if (endpoint.failing && failingHeld >= caps.failingTotal) continue;
      given.set(endpoint.webhook_id, (given.get(endpoint.webhook_id) ?? 0) + 1);
      if (endpoint.failing) failingHeld++;
      left--;
      progress = true;
    }
  }
  return given;
}
