import type { Task } from "../../server/engine/worker.js";
import { gateCommit, type GateDeps } from "../gate/gate-commit.js";
import { commitOfEvent } from "./commit-of-event.js";

/** The job of a delivery, after GitHub was answered: gate the commit it names, if it names one. */
export function makeProcessDelivery(deps: GateDeps): Task {
  return async function processDelivery(payload) {
    const delivery = deps.store.getDelivery((payload as { delivery_id: string }).delivery_id);
    if (!delivery) return;
    const body = JSON.parse(delivery.payload) as Parameters<typeof commitOfEvent>[1];
    const isOurCheck = (name: string) =>
      body.repository !== undefined && body.check_run !== undefined &&
      deps.store.listGitHubCommitsOfSha(body.repository.id, body.check_run.head_sha).some((commit) => commit.check_name === name);
    const commit = commitOfEvent(delivery.event, body, isOurCheck);
    const what = `${delivery.event}${delivery.action ? `.${delivery.action}` : ""} (delivery ${delivery.delivery_id})`;
    if (!commit) {
      deps.log.info(`Received ${what}: nothing to gate`);
      return;
    }
    deps.log.info(`Received ${what}: gating ${commit.repository.full_name}@${commit.headSha.slice(0, 7)}${commit.rerun ? " again" : ""}`);
    await gateCommit(deps, commit);
  };
}
