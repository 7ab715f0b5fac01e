import type { GitHubEventHandler } from "./github-event.js";
import { gateNamedCommit, hintOf } from "./gate-named-commit.js";

/** A push to the default branch: its new tip is gated, so that each merged commit has a decision. */
export const gatePush: GitHubEventHandler<"push"> = async (deps, payload, { what }) => {
  const base = hintOf(payload);
  const toDefaultBranch =
    base && payload.after && !payload.deleted && payload.ref === `refs/heads/${base.repository.default_branch}`;
  await gateNamedCommit(
    deps,
    what,
    toDefaultBranch
      ? { ...base, headSha: payload.after, branch: base.repository.default_branch, rerun: false }
      : undefined,
  );
};
