import { UNMET_STATUSES, type DecisionReport, type RunReport } from "../../server/releases/report/report.js";
import { excerptsWanted, listFailures } from "../../server/releases/report/failures.js";
import { agentExcerpts } from "../../server/runs/agent-excerpt.js";
import { buildEvidence } from "../../server/runs/build-evidence.js";
import type { GitHubCommit } from "../../server/store/github.js";
import type { ServiceStore } from "../../server/store/service-store.js";
import type { GateProblem } from "./gate-problem.js";

/** What a gated commit's check run is made from: its decision's report, or its problem. */
export type GateView =
  | ({ kind: "decision"; commit: GitHubCommit } & DecisionReport)
  | { kind: "problem"; commit: GitHubCommit; problem: GateProblem };

/** Reads what a gated commit's check run shows: its problem, or its decision with the planned runs' evidence. */
export async function readGateView(store: ServiceStore, commit: GitHubCommit): Promise<GateView | undefined> {
  if (commit.problem) return { kind: "problem", commit, problem: commit.problem };
  const decision = commit.decision_id ? await store.getDecision(commit.decision_id) : undefined;
  if (!decision) return undefined;
  const runs: RunReport[] = [];
  for (const { run_id } of decision.planned) {
    const run = run_id ? await store.getRun(run_id) : undefined;
    if (!run) continue;
    const source = await store.getSpecVersionSource(run.test_spec_id, run.spec_version);
    const evidence = await buildEvidence(store, run);
    const unmet = (await store.listEvaluations(run.run_id, {}, undefined, 10_000)).filter((evaluation) =>
      UNMET_STATUSES.has(evaluation.status),
    );
    const failureSource = {
      evaluations: unmet,
      document: await store.getSpecDocument(run.test_spec_id, run.spec_version),
      lines: source?.lines ?? {},
    };
    runs.push({
      evidence,
      specName: source?.name ?? run.test_spec_id,
      specPath: source?.path ?? null,
      lines: source?.lines ?? {},
      environmentName: evidence.environment,
      unmet,
      failures: listFailures(failureSource, await agentExcerpts(store, excerptsWanted(failureSource))),
      findings: evidence.findings,
    });
  }
  // A fork's runs start once a writer approves: who did is part of what the check run shows.
  const approval = commit.fork
    ? ((await store.listApprovalPresses(commit.repository_id, commit.head_sha)).find((press) => press.granted) ?? null)
    : null;
  const policy = {
    approvals: await store.listPolicyApprovals(decision.decision_id),
    refused: (await store.listApprovalPresses(commit.repository_id, commit.head_sha, "approve-policy"))
      .filter((press) => !press.granted)
      .map((press) => ({ login: press.login, refusal: press.refusal ?? "", pressed_at: press.pressed_at })),
  };
  return { kind: "decision", commit, decision, runs, approval, policy };
}
