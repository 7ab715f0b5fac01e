import { rerunCheckRun } from "./check-run-rerequested.js";
import { pressCheckRunButton } from "./check-run-requested-action.js";
import { gateCheckSuite } from "./check-suite.js";
import { recordDeployment } from "./deployment-status.js";
import { on, type GitHubEventHandler } from "./github-event.js";
import { gatePullRequestHead } from "./pull-request.js";
import { gatePush } from "./push.js";

/**
 * The GitHub events the App handles, by name as @octokit/webhooks names them: one line each. Any
 * other delivery is kept and acknowledged, and nothing is gated.
 */
export const GITHUB_EVENTS = [
  on("pull_request.opened", gatePullRequestHead),
  on("pull_request.synchronize", gatePullRequestHead),
  on("pull_request.reopened", gatePullRequestHead),
  on("pull_request.edited", gatePullRequestHead),
  on("push", gatePush),
  on("check_suite.requested", gateCheckSuite),
  on("check_suite.rerequested", gateCheckSuite),
  on("check_run.rerequested", rerunCheckRun),
  on("check_run.requested_action", pressCheckRunButton),
  on("deployment_status", recordDeployment),
];

const BY_NAME = new Map<string, GitHubEventHandler<never>>(GITHUB_EVENTS.map(({ name, handle }) => [name, handle]));

/** The handler of a delivery: its action's own (`check_run.rerequested`), else its event's (`push`). */
export const handlerOf = (event: string, action: string | null): GitHubEventHandler<never> | undefined =>
  (action ? BY_NAME.get(`${event}.${action}`) : undefined) ?? BY_NAME.get(event);
