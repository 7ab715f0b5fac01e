import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import type { GateDeps } from "../../gate/commit-to-gate.js";

/** The payload of an event, typed by its name (`"<event>.<action>"`, or `"<event>"`). */
export type GitHubPayload<Name extends EmitterWebhookEventName> = EmitterWebhookEvent<Name>["payload"];

/** The delivery a payload came in. */
export interface Delivery {
  id: string;
  /** What the logs call it: `check_run.rerequested (delivery …)`. */
  what: string;
}

/** What the App does with a delivery of the event, once GitHub was answered. */
export type GitHubEventHandler<Name extends EmitterWebhookEventName> = (
  deps: GateDeps,
  payload: GitHubPayload<Name>,
  delivery: Delivery,
) => Promise<void>;

/** A line of the registry: an event's name (`"<event>.<action>"` for one action, `"<event>"` for all) and its handler. */
export interface GitHubEventRoute {
  name: EmitterWebhookEventName;
  /** Called with a payload GitHub signed for the event: typed by its name, not checked. */
  handle: GitHubEventHandler<never>;
}

/**
 * Handles the event `name` with `handle`, whose payload is typed by the name (as `webhooks.on`
 * does). A handler of several events is generic over their names: checked for each name, its
 * payload narrowed by its action.
 */
export const on = <Name extends EmitterWebhookEventName>(
  name: Name,
  handle: NoInfer<GitHubEventHandler<Name>>,
): GitHubEventRoute => ({ name, handle: handle as unknown as GitHubEventHandler<never> });
