import type { CreateDecisionBody, ReleaseDecision, RepositoryBinding } from "../contract/index.js";
import { assertActsFor, type Principal } from "../auth/authenticate.js";
import { ApiError } from "../errors.js";
import type { NewId } from "../ids.js";
import type { Clock } from "../clock.js";
import type { ServiceStore } from "../store/service-store.js";
import type { AppPlan, PlanSlot } from "../store/release-decisions.js";
import type { CommitGate } from "./commit-gate.js";
import { outsideAudit } from "../store/audit-scope.js";

export interface DecisionDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
  /** The GitHub App, when it is configured: it plans the decisions of the repositories it gates. */
  commitGate?: CommitGate | undefined;
}

const refused = (path: string, message: string) =>
  new ApiError("VALIDATION_FAILED", { message, details: [{ path, message }] });
/** What a decision names that its project does not have: not found, as another project's resources are. */
const notInProject = (path: string, message: string) =>
  new ApiError("NOT_FOUND", {
    message: `${message[0]!.toUpperCase()}${message.slice(1)}.`,
    details: [{ path, message }],
  });

/** Checks that what a decision names belongs to its project: the runs of its subject, the specs and environments of its plan. */
async function assertInProject(
  { store }: Pick<DecisionDeps, "store">,
  projectId: string,
  body: Pick<CreateDecisionBody, "subject" | "base"> & { plan?: readonly PlanSlot[] | undefined },
): Promise<void> {
  if ("run_ids" in body.subject) {
    for (const [i, runId] of body.subject.run_ids.entries()) {
      if ((await store.getRun(runId))?.project_id !== projectId) {
        throw notInProject(`body.subject.run_ids[${i}]`, `run '${runId}' is not a run of this project`);
      }
    }
    if (new Set(body.subject.run_ids).size !== body.subject.run_ids.length) {
      throw refused("body.subject.run_ids", "a run is listed twice");
    }
    if (body.plan !== undefined) {
      throw refused("body.plan", "a decision on runs waits for those runs: it takes no plan");
    }
    if (body.base !== undefined) {
      throw refused("body.base", "a decision on runs has no base branch: make one for the pull request's head commit");
    }
  }
  for (const [i, { test_spec_id, environment_id }] of (body.plan ?? []).entries()) {
    if ((await store.getTestSpecHead(test_spec_id))?.project_id !== projectId) {
      throw notInProject(`body.plan[${i}].test_spec_id`, `test spec '${test_spec_id}' is not in this project`);
    }
    if ((await store.getEnvironmentRow(environment_id))?.project_id !== projectId) {
      throw notInProject(`body.plan[${i}].environment_id`, `environment '${environment_id}' is not in this project`);
    }
  }
}

/** The repository as the project binds it, when the GitHub App gates it: then the App, not the request, plans its commits' decisions. */
async function gatedByApp(
  { store, commitGate }: Pick<DecisionDeps, "store" | "commitGate">,
  projectId: string,
  repository: string,
): Promise<RepositoryBinding | undefined> {
  const bound = (await store.getProject(projectId))?.repositories.find(
    (r) => r.full_name.toLowerCase() === repository.toLowerCase(),
  );
  return bound && commitGate && (await commitGate.gates(bound)) ? bound : undefined;
}

const plannedByApp = (repository: string, fields: readonly string[]) =>
  new ApiError("PLANNED_BY_APP", {
    message:
      `${repository} is gated by the GitHub App: the service plans its commits' decisions from what GitHub says (the base branch's config and policy, the head's specs), ` +
      `so a request may not name ${fields.join(" or ")}. Send the subject alone to have the commit gated.`,
    details: fields.map((field) => ({ path: `body.${field}`, message: "the GitHub App plans this commit's decision" })),
  });

/**
 * What the API's `POST /v1/release-decisions` does. A commit of a repository the GitHub App gates
 * is gated by the App, as a delivery about it would be: a body that names its plan or base is
 * refused, since the change under review must not choose what it is judged by. Any other subject
 * is decided as the client planned it (`planned_by: client`).
 */
export async function requestDecision(
  deps: DecisionDeps,
  principal: Principal,
  projectId: string,
  body: Pick<CreateDecisionBody, "subject" | "plan" | "base">,
): Promise<{ decision: ReleaseDecision; created: boolean }> {
  if ("repository" in body.subject) {
    const { repository, commit_sha } = body.subject;
    assertActsFor(
      principal,
      repository,
      (await deps.store.getProject(projectId))?.repositories ?? [],
      "body.subject.repository",
    );
    const bound = await gatedByApp(deps, projectId, repository);
    if (bound) {
      const named = (["plan", "base"] as const).filter((field) => body[field] !== undefined);
      if (named.length > 0) throw plannedByApp(repository, named);
      return gatedForRequest(deps, () => deps.commitGate!.gate(projectId, bound, commit_sha, { rerun: false }), {
        rerun: false,
      });
    }
  }
  return createDecision(deps, projectId, body);
}

/**
 * The App gates the commit with writes of its own (not the request's); the request's audit event
 * then names the decision it led to.
 */
async function gatedForRequest(
  deps: Pick<DecisionDeps, "store">,
  gate: () => ReturnType<CommitGate["gate"]>,
  { rerun }: { rerun: boolean },
): ReturnType<CommitGate["gate"]> {
  const gated = await outsideAudit(gate);
  // Like any write that finds what it was asked to make, finding the decision leaves no event; a new attempt does.
  await deps.store.write([
    "acknowledgeRequest",
    { decision_id: gated.decision.decision_id, project_id: gated.decision.project_id, created: gated.created || rerun },
  ]);
  return gated;
}

/**
 * What the API's `POST /v1/release-decisions/{id}/attempts` does: the commit's runs again. The
 * App's decisions are re-gated by the App (a plan in the body is refused); a client's wait for
 * the plan it names, the current one if none.
 */
export async function requestAttempt(
  deps: DecisionDeps,
  principal: Principal,
  decision: ReleaseDecision,
  plan: CreateDecisionBody["plan"],
): Promise<ReleaseDecision> {
  if ("run_ids" in decision.subject) {
    throw new ApiError("CONFLICT", { message: "A decision on a set of runs has no attempts: make a new one." });
  }
  const { repository, commit_sha } = decision.subject;
  assertActsFor(
    principal,
    repository,
    (await deps.store.getProject(decision.project_id))?.repositories ?? [],
    "decision.subject.repository",
  );
  const bound = await gatedByApp(deps, decision.project_id, repository);
  if (bound) {
    if (plan !== undefined) throw plannedByApp(repository, ["plan"]);
    return (
      await gatedForRequest(
        deps,
        () => deps.commitGate!.gate(decision.project_id, bound, commit_sha, { rerun: true }),
        { rerun: true },
      )
    ).decision;
  }
  if (decision.planned_by === "app") {
    throw new ApiError("GITHUB_UNAVAILABLE", {
      message: `The GitHub App planned this decision, and it cannot reach ${repository} now: try again later.`,
      headers: { "retry-after": "30" },
    });
  }
  return startAttempt(deps, decision, plan);
}

/**
 * Makes a release decision a client planned, or finds the one of its commit (one per project,
 * repository and commit). A pull request's head names its base branch (`base`): the baseline is
 * chosen from it then, once.
 */
export async function createDecision(
  deps: DecisionDeps,
  projectId: string,
  body: Pick<CreateDecisionBody, "subject" | "plan" | "base">,
): Promise<{ decision: ReleaseDecision; created: boolean }> {
  await assertInProject(deps, projectId, body);
  const [outcome] = await deps.store.write([
    "createDecision",
    {
      decision_id: deps.newId("decision"),
      project_id: projectId,
      subject: body.subject,
      plan: body.plan ?? [],
      base: body.base,
    },
    deps.clock.now().toISOString(),
  ]);
  return outcome;
}

/** Makes or brings up to date a commit's decision as the GitHub App plans it (see the store's planAppDecision). */
export async function planAppDecision(
  deps: DecisionDeps,
  plan: Omit<AppPlan, "decision_id">,
): Promise<{ decision: ReleaseDecision; created: boolean }> {
  await assertInProject(deps, plan.project_id, { subject: plan.subject, plan: plan.plan });
  const [outcome] = await deps.store.write([
    "planAppDecision",
    { ...plan, decision_id: deps.newId("decision") },
    deps.clock.now().toISOString(),
  ]);
  return outcome;
}

/** Starts a decision's runs again: a new attempt, waiting for `plan` (the current one unless given). */
export async function startAttempt(
  deps: DecisionDeps,
  decision: ReleaseDecision,
  plan: CreateDecisionBody["plan"],
): Promise<ReleaseDecision> {
  if ("run_ids" in decision.subject) {
    throw new ApiError("CONFLICT", { message: "A decision on a set of runs has no attempts: make a new one." });
  }
  await assertInProject(deps, decision.project_id, { subject: decision.subject, plan });
  const [updated] = await deps.store.write([
    "startDecisionAttempt",
    decision.decision_id,
    plan,
    deps.clock.now().toISOString(),
  ]);
  return updated;
}
