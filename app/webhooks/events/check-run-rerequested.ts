import type { GitHubEventHandler } from "./github-event.js";
import { gateNamedCommit, hintOfOurCheckRun } from "./gate-named-commit.js";

/** The App's check run re-run from GitHub's page: the commit's runs start again (a new attempt). */
export const rerunCheckRun: GitHubEventHandler<"check_run.rerequested"> = async (deps, payload, { what }) => {
  await gateNamedCommit(deps, what, await hintOfOurCheckRun(deps, payload, true));
};
