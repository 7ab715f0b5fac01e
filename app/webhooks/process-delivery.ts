import { z } from "zod";
import { defineTask } from "../../server/engine/define-task.js";
import type { Task } from "../../server/engine/worker.js";
import type { GateDeps } from "../gate/commit-to-gate.js";
import { handlerOf } from "./events/index.js";

/**
 * The job of a delivery, after GitHub was answered: the handler of its event (./events) does what
 * the App does with it — most gate the commit it names; the App only acknowledges the others.
 */
export function makeProcessDelivery(deps: GateDeps): Task {
  return defineTask(z.object({ delivery_id: z.string() }), async function processDelivery({ delivery_id }) {
    const delivery = await deps.store.getDelivery(delivery_id);
    if (!delivery) return;
    const what = `${delivery.event}${delivery.action ? `.${delivery.action}` : ""} (delivery ${delivery.delivery_id})`;
    const handle = handlerOf(delivery.event, delivery.action);
    if (!handle) {
      deps.log.info(`Received ${what}: nothing to gate`);
      return;
    }
    await handle(deps, delivery.payload as never, { id: delivery.delivery_id, what });
  });
}
