import type { Probot } from "probot";
import type { Clock } from "../server/clock.js";
import type { ServiceStore } from "../server/store/service-store.js";
import { receiveDelivery } from "./webhooks/receive-delivery.js";

/**
 * The GitHub side of assure, as Probot calls it: every delivery, verified by Probot, is kept and
 * queued before GitHub is answered, and processed after (`process_github_delivery`).
 */
export function makeAssureApp(deps: { store: ServiceStore; clock: Clock; nudgeEngine: () => void }) {
  return function assureApp(app: Probot): void {
    app.onAny(async (context) => {
      const isNew = await receiveDelivery(deps, {
        id: context.id,
        name: context.name,
        payload: context.payload as { action?: string },
      });
      if (isNew) deps.nudgeEngine();
      else app.log.info(`Delivery ${context.id} (${context.name}) was received before; dropped`);
    });
  };
}
