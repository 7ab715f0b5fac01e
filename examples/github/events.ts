import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const examples = require("@octokit/webhooks-examples") as { name: string; examples: Record<string, any>[] }[];

/** A real payload from @octokit/webhooks-examples, copied, to be adapted to the test's repository and commits. */
export function examplePayload(
  event: string,
  action?: string,
  pick: (example: Record<string, any>) => boolean = () => true,
): Record<string, any> {
  const found = examples
    .find((e) => e.name === event)
    ?.examples.find((e) => (action === undefined || e.action === action) && pick(e));
  if (!found) throw new Error(`no example of ${event}${action ? `.${action}` : ""}`);
  return structuredClone(found);
}

export interface TestRepository {
  id: number;
  full_name: string;
  default_branch: string;
  installationId: number;
}

function adaptRepository(payload: Record<string, any>, repository: TestRepository) {
  const [owner, name] = repository.full_name.split("/") as [string, string];
  payload.repository = {
    ...payload.repository,
    id: repository.id,
    name,
    full_name: repository.full_name,
    default_branch: repository.default_branch,
    owner: { ...payload.repository.owner, login: owner },
  };
  payload.installation = { id: repository.installationId, node_id: `I_${repository.installationId}` };
  return payload;
}

/** `pull_request` (opened, synchronize or reopened) for a head and base commit, into the default branch unless `baseBranch` says; from a fork if one is named. */
export function pullRequestEvent(
  repository: TestRepository,
  {
    action = "opened",
    number = 7,
    head,
    base,
    branch = "feature",
    baseBranch = repository.default_branch,
    fork,
  }: {
    action?: string;
    number?: number;
    head: string;
    base: string;
    branch?: string;
    baseBranch?: string;
    fork?: { id: number; full_name: string };
  },
) {
  const payload = adaptRepository(examplePayload("pull_request", action), repository);
  payload.number = number;
  const headRepo = fork
    ? { ...payload.repository, id: fork.id, full_name: fork.full_name, name: fork.full_name.split("/")[1], fork: true }
    : payload.repository;
  payload.pull_request = {
    ...payload.pull_request,
    number,
    head: { ...payload.pull_request.head, sha: head, ref: branch, repo: headRepo },
    base: { ...payload.pull_request.base, sha: base, ref: baseBranch, repo: payload.repository },
  };
  return payload;
}

/** `check_suite` requested (or rerequested) for a commit. */
export function checkSuiteEvent(
  repository: TestRepository,
  {
    action = "requested",
    head,
    branch = "feature",
    pullRequest,
  }: { action?: string; head: string; branch?: string | null; pullRequest?: number },
) {
  const payload = adaptRepository(examplePayload("check_suite", action), repository);
  payload.check_suite = {
    ...payload.check_suite,
    head_sha: head,
    head_branch: branch,
    pull_requests: pullRequest ? [{ number: pullRequest, head: { sha: head }, base: {} }] : [],
  };
  return payload;
}

/** `push` of a commit to a branch (the default one unless named). */
export function pushEvent(
  repository: TestRepository,
  { after, before = "0".repeat(40), branch }: { after: string; before?: string; branch?: string },
) {
  const payload = adaptRepository(
    examplePayload("push", undefined, (e) => typeof e.ref === "string" && e.ref.startsWith("refs/heads/")),
    repository,
  );
  payload.ref = `refs/heads/${branch ?? repository.default_branch}`;
  payload.after = after;
  payload.before = before;
  payload.deleted = false;
  return payload;
}

/** `check_run` rerequested, or requested_action (a button), for one of the App's check runs. */
export function checkRunEvent(
  repository: TestRepository,
  {
    action,
    name,
    head,
    identifier,
    sender = "octocat",
  }: { action: string; name: string; head: string; identifier?: string; sender?: string },
) {
  const payload = adaptRepository(examplePayload("check_run", action), repository);
  payload.check_run = {
    ...payload.check_run,
    name,
    head_sha: head,
    check_suite: { ...payload.check_run.check_suite, head_branch: "feature", pull_requests: [] },
  };
  if (identifier) payload.requested_action = { identifier };
  payload.sender = { ...payload.sender, login: sender };
  return payload;
}

/** `deployment_status` created for a deployment of a commit to a GitHub environment, at a URL once it succeeded. */
export function deploymentStatusEvent(
  repository: TestRepository,
  {
    head,
    environment,
    url,
    state = "success",
    deploymentId = 1,
  }: { head: string; environment: string; url?: string; state?: string; deploymentId?: number },
) {
  const payload = adaptRepository(
    examplePayload("deployment_status", "created", (e) => e.deployment_status.state === "success"),
    repository,
  );
  payload.deployment = { ...payload.deployment, id: deploymentId, sha: head, environment, ref: "feature" };
  payload.deployment_status = {
    ...payload.deployment_status,
    state,
    environment,
    ...(url ? { environment_url: url } : {}),
  };
  return payload;
}
