import {
  decisionPath,
  type DecisionBase,
  type DecisionBaseline,
  type DecisionChanges,
  type DecisionReason,
  type DecisionStatus,
  type Pricing,
  type Run,
  type TestSpecDocument,
} from "../contract/index.js";
import { chooseBaseline } from "../changes/baseline.js";
import { specCases } from "../changes/cases.js";
import { caseIdOf, type CaseEvaluation } from "../changes/compare-cases.js";
import { measureFlakiness } from "../changes/flakiness.js";
import {
  judgeChange,
  summarizeChanges,
  withChange,
  withFlakiness,
  type BaseOf,
  type ChangeSide,
  type CitedEvaluation,
  type SlotChange,
} from "../changes/judge-change.js";
import { contentAddress } from "../specs/canonical-json.js";
import { figuresOf, type AgentUsage } from "../usage/agent-usage.js";
import { decideRelease, type SlotFacts } from "./decide-release.js";

/** A run as deciding reads it. */
export interface RunFacts extends Pick<
  Run,
  "run_id" | "status" | "verdict" | "failure" | "test_spec_id" | "executor" | "uploaded_by"
> {
  /** The spec document of the version it ran. */
  spec: TestSpecDocument;
  usage: AgentUsage | null;
  pricing: Pricing;
}

/** A gate a run's evaluation judged. */
export interface GateFacts {
  gate_id: string;
  status: "passed" | "failed" | "inconclusive" | "waived";
  reason: string;
  evidence_refs: string[];
}

/**
 * What deciding a release reads, beyond the decision itself: the port each store implements with
 * its own queries. Nothing here writes.
 */
export interface DecisionFacts {
  run(runId: string): RunFacts | undefined;
  gates(runId: string): GateFacts[];
  /** One per conversation and check of a run: passed when all its evaluations passed, the mean score, one to cite. */
  caseEvaluations(runId: string): CitedEvaluation[];
  /** What a failed gate of a run can cite (its evaluations not passed, its findings), each with its case and API path. */
  citedCases(runId: string): (CaseEvaluation & { ref: string })[];
  /** The run in a decision's current attempt that fills the slot of a spec in an environment. */
  runOfSlot(decisionId: string, testSpecId: string, environmentId: string): string | null | undefined;
  /** Names a slot in a reason while it has no run: the spec's and environment's names. */
  slotLabel(testSpecId: string, environmentId: string): string;
  /** The decided (not pending) decision of a commit. */
  decidedDecisionOf(projectId: string, repository: string, commitSha: string): string | undefined;
}

/** A decision as it is kept: what its status is a projection of. */
export interface DecisionRecord {
  decision_id: string;
  base: DecisionBase | null;
  baseline: DecisionBaseline | null;
  /** The base branch's decided decisions along the chain, oldest first (for flakiness). */
  history: readonly string[];
  /** The current attempt's planned runs. */
  slots: readonly {
    test_spec_id: string;
    environment_id: string;
    run_id: string | null;
    waiting: { for: string; until: string } | null;
  }[];
  /** The waivers and policy approvals in force (not revoked, not expired). */
  waivers: readonly { waiver_id: string; run_id: string | null; gate_id: string; policy_hash: string | null }[];
}

export interface Judged {
  status: DecisionStatus;
  reasons: DecisionReason[];
  /** The comparison with the baseline; null without one. */
  changes: DecisionChanges | null;
}

const JUDGED = new Set<Run["status"]>(["COMPLETED", "INCONCLUSIVE"]);

export const waiverPath = (decisionId: string, waiverId: string) => `${decisionPath(decisionId)}/waivers/${waiverId}`;
export const policyApprovalPath = (decisionId: string, approvalId: string) =>
  `${decisionPath(decisionId)}/policy-approvals/${approvalId}`;

/** What an approval of a decision's policy changes approves: their content address. */
export const policyHashOf = (base: DecisionBase | null) => contentAddress(base?.policy_changes ?? []);

/**
 * A decision's status, reasons and changes from what it rests on now: the runs planned in its
 * current attempt and their gates, each compared with the baseline's run and labelled by the base
 * branch's flakiness, and the waivers in force.
 */
export function judgeDecision(record: DecisionRecord, facts: DecisionFacts, now: string): Judged {
  const { decision_id: decisionId, base, baseline, history } = record;
  const sideOf = (run: RunFacts): ChangeSide => ({
    run_id: run.run_id,
    spec: run.spec,
    evaluations: facts.caseEvaluations(run.run_id),
    usage: figuresOf(run.usage, run.pricing),
  });
  const judgedRunOfSlot = (decision: string, slot: { test_spec_id: string; environment_id: string }) => {
    const runId = facts.runOfSlot(decision, slot.test_spec_id, slot.environment_id);
    const run = runId ? facts.run(runId) : undefined;
    return run && JUDGED.has(run.status) ? run : undefined;
  };

  /** The baseline's run of the same spec and environment, or why there is none to compare with. */
  const baseOf = (found: DecisionBaseline, slot: { test_spec_id: string; environment_id: string }): BaseOf => {
    if (!found.found) return { side: null, why: `no baseline to compare with (${found.reason})` };
    const commit = found.commit_sha!.slice(0, 7);
    const runId = facts.runOfSlot(found.decision_id!, slot.test_spec_id, slot.environment_id);
    const run = runId ? facts.run(runId) : undefined;
    if (!run) {
      return {
        side: null,
        why: `the baseline ${commit} did not run this spec in this environment: nothing to compare with`,
      };
    }
    if (!JUDGED.has(run.status)) {
      return {
        side: null,
        why: `the baseline ${commit}'s run ${run.run_id} could not be judged (${run.status}): nothing to compare with`,
      };
    }
    return { side: sideOf(run), commit_sha: found.commit_sha! };
  };

  /** The head's cases flaky over the base branch's history of the same spec and environment. */
  const flakinessOf = (head: RunFacts, slot: { test_spec_id: string; environment_id: string }, on: DecisionBase) => {
    const sides = history.map((decision) => {
      const run = judgedRunOfSlot(decision, slot);
      return run ? sideOf(run) : null;
    });
    const headVersions = new Map([...specCases(head.spec)].map((c) => [c.case_id, c.version]));
    return measureFlakiness(sides, headVersions, on.settings.flaky);
  };

  /** The case each failure a run's gates can cite belongs to, by its evidence ref. */
  const casesOfRefs = (runId: string) => {
    const byRef = new Map(facts.citedCases(runId).map((row) => [row.ref, caseIdOf(row)]));
    return (ref: string) => byRef.get(ref);
  };

  const compared: SlotChange[] = [];
  const slots = record.slots.map((slot): SlotFacts => {
    const run = slot.run_id ? facts.run(slot.run_id) : undefined;
    const judged = run && base && baseline && JUDGED.has(run.status);
    const flaky = judged ? flakinessOf(run, slot, base) : new Map();
    const change = judged ? judgeChange(sideOf(run), baseOf(baseline, slot), flaky) : undefined;
    if (change) compared.push(change);
    return {
      test_spec_id: slot.test_spec_id,
      environment_id: slot.environment_id,
      label: facts.slotLabel(slot.test_spec_id, slot.environment_id),
      waiting: slot.waiting,
      run: run
        ? {
            run_id: run.run_id,
            status: run.status,
            verdict: run.verdict,
            failure: run.failure,
            executor: run.executor,
            uploaded_by: run.uploaded_by,
            gates: withChange(
              withFlakiness(facts.gates(run.run_id), flaky.size > 0 ? casesOfRefs(run.run_id) : () => undefined, flaky),
              change,
            ),
          }
        : null,
    };
  });
  // An approval of policy changes lifts the gate `policy` only while the changes are those it approved.
  const approvedNow = policyHashOf(base);
  const waivers = record.waivers
    .filter((w) => w.run_id !== null || w.policy_hash === null || w.policy_hash === approvedNow)
    .map((w) => ({
      run_id: w.run_id,
      gate_id: w.gate_id,
      ref: w.run_id === null ? policyApprovalPath(decisionId, w.waiver_id) : waiverPath(decisionId, w.waiver_id),
    }));
  const decided = decideRelease(slots, waivers, now, {
    changes: base?.policy_changes ?? [],
    mode: base?.settings.policy_changes ?? "require_approval",
    // Read from the base branch (a decision without one allows none): the head cannot let its own uploads count.
    executedOutsideService: base?.settings.executed_outside_service ?? "never",
  });
  return {
    status: decided.status,
    reasons: decided.reasons,
    changes: baseline?.found ? summarizeChanges(compared) : null,
  };
}

/**
 * Chooses the baseline of a pull request's head: the first decided decision of the repository
 * along the base branch's first-parent chain. A decision still pending is passed over: a change
 * is judged against evidence that exists. Also keeps the decided ones (up to 20, oldest first) as
 * the history flakiness is measured over.
 */
export function chooseBaselineOf(
  decision: { project_id: string; repository: string },
  base: DecisionBase,
  facts: Pick<DecisionFacts, "decidedDecisionOf">,
): { baseline: DecisionBaseline; history: string[] } {
  const mergeBase = base.commits[0]!.sha;
  const decisionOf = (sha: string) => {
    const decisionId = facts.decidedDecisionOf(decision.project_id, decision.repository, sha);
    return decisionId ? { decision_id: decisionId, commit_sha: sha } : undefined;
  };
  const chosen = chooseBaseline(base.commits, decisionOf, base.settings.baseline);
  const baseline: DecisionBaseline = chosen.found
    ? { ...chosen, reason: null, merge_base_sha: mergeBase }
    : {
        found: false,
        decision_id: null,
        commit_sha: null,
        age_commits: null,
        age_days: null,
        warning: null,
        reason: chosen.reason,
        merge_base_sha: mergeBase,
      };
  const history = base.commits
    .slice(0, base.settings.baseline.depth)
    .flatMap((commit) => decisionOf(commit.sha)?.decision_id ?? [])
    .slice(0, 20)
    .reverse();
  return { baseline, history };
}
