import type { CreateDecisionBody, ReleaseDecision } from "../contract/index.js";
import { ApiError } from "../errors.js";
import type { NewId } from "../ids.js";
import type { Clock } from "../clock.js";
import type { ServiceStore } from "../store/service-store.js";

export interface DecisionDeps {
  store: ServiceStore;
  clock: Clock;
  newId: NewId;
}

const refused = (path: string, message: string) => new ApiError("VALIDATION_FAILED", { message, details: [{ path, message }] });

/** Checks that what a decision names belongs to its project: the runs of its subject, the specs and environments of its plan. */
function assertInProject({ store }: Pick<DecisionDeps, "store">, projectId: string, body: Pick<CreateDecisionBody, "subject" | "plan" | "base">): void {
  if ("run_ids" in body.subject) {
    body.subject.run_ids.forEach((runId, i) => {
      if (store.getRun(runId)?.project_id !== projectId) throw refused(`body.subject.run_ids[${i}]`, `run '${runId}' is not a run of this project`);
    });
    if (new Set(body.subject.run_ids).size !== body.subject.run_ids.length) throw refused("body.subject.run_ids", "a run is listed twice");
    if (body.plan !== undefined) throw refused("body.plan", "a decision on runs waits for those runs: it takes no plan");
    if (body.base !== undefined) throw refused("body.base", "a decision on runs has no base branch: make one for the pull request's head commit");
  }
  (body.plan ?? []).forEach(({ test_spec_id, environment_id }, i) => {
    if (store.getTestSpecHead(test_spec_id)?.project_id !== projectId) throw refused(`body.plan[${i}].test_spec_id`, `test spec '${test_spec_id}' is not in this project`);
    if (store.getEnvironmentRow(environment_id)?.project_id !== projectId) {
      throw refused(`body.plan[${i}].environment_id`, `environment '${environment_id}' is not in this project`);
    }
  });
}

/**
 * Makes a release decision, or finds the one of its commit (one per project, repository and
 * commit): the GitHub App, the Action and API clients all come here. A pull request's head names
 * its base branch (`base`): the baseline is chosen from it then, once.
 */
export async function createDecision(
  deps: DecisionDeps,
  projectId: string,
  body: Pick<CreateDecisionBody, "subject" | "plan" | "base">,
): Promise<{ decision: ReleaseDecision; created: boolean }> {
  assertInProject(deps, projectId, body);
  const [outcome] = await deps.store.write([
    "createDecision",
    { decision_id: deps.newId("decision"), project_id: projectId, subject: body.subject, plan: body.plan ?? [], base: body.base },
    deps.clock.now().toISOString(),
  ]);
  return outcome;
}

/** Starts a decision's runs again: a new attempt, waiting for `plan` (the current one unless given). */
export async function startAttempt(deps: DecisionDeps, decision: ReleaseDecision, plan: CreateDecisionBody["plan"]): Promise<ReleaseDecision> {
  if ("run_ids" in decision.subject) throw refused("decision", "a decision on a set of runs has no attempts: make a new one");
  assertInProject(deps, decision.project_id, { subject: decision.subject, plan });
  const [updated] = await deps.store.write(["startDecisionAttempt", decision.decision_id, plan, deps.clock.now().toISOString()]);
  return updated;
}
