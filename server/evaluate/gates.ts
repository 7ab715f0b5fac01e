import {
  BUDGET_GATE_ID,
  evaluationPath,
  findingPath,
  type EvaluationKind,
  type GateSpec,
  type TestSpecDocument,
} from "../contract/index.js";
import type { EvaluationDraft, FindingDraft } from "./evaluator.js";
import type { RunEvidence } from "../specs/gate-requirements/define.js";
import { requirementOf } from "../specs/gate-requirements/index.js";

export type GateStatus = "passed" | "failed" | "inconclusive";

export interface GateDecision {
  gate_id: string;
  title: string | null;
  status: GateStatus;
  reason: string;
  evidence_refs: string[];
}

export type StoredEvaluation = EvaluationDraft & { kind: EvaluationKind; evaluation_id: string };
export type StoredFinding = FindingDraft & { finding_id: string };

export interface GateInputs {
  evaluations: readonly StoredEvaluation[];
  findings: readonly StoredFinding[];
  /** Whether an LLM judge was configured to score the spec's metrics. */
  judgeConfigured: boolean;
}

/**
 * Decides each gate of the spec from the run's evaluations and findings, citing the ones that
 * decided it. What cannot be decided is inconclusive, never passed: the release fails closed.
 */
export function decideGates(spec: TestSpecDocument, runId: string, inputs: GateInputs): GateDecision[] {
  const evaluationRefs = (list: readonly { evaluation_id: string }[]) =>
    list.map((e) => evaluationPath(runId, e.evaluation_id));
  const ofKind = (kind: StoredEvaluation["kind"]) => inputs.evaluations.filter((e) => e.kind === kind);
  const run: RunEvidence = {
    spec,
    evaluations: ofKind,
    findings: inputs.findings,
    judgeConfigured: inputs.judgeConfigured,
    cite: {
      evaluations: evaluationRefs,
      findings: (list) => list.map((f) => findingPath(runId, f.finding_id)),
    },
  };

  const gates = spec.gates.map((gate: GateSpec): GateDecision => {
    const decided = requirementOf(gate.require)?.decide(gate.require, run) ?? {
      // Only `no_regression`: a run alone has nothing to compare with; its release decision compares it with the base branch.
      status: "passed" as const,
      reason:
        "no_regression is judged by the release decision, against the base branch's evidence (a run alone has nothing to compare with)",
      evidence_refs: [],
    };
    return { gate_id: gate.id, title: gate.title ?? null, ...decided };
  });
  // A spec with a budget gets its gate: failed when the tokens or the cost went over, inconclusive
  // when either cannot be checked.
  if (spec.defaults?.budget) {
    const budgets = ofKind("budget");
    const status: GateStatus =
      budgets.length === 0
        ? "inconclusive"
        : budgets.some((b) => b.status === "failed")
          ? "failed"
          : budgets.every((b) => b.status === "passed")
            ? "passed"
            : "inconclusive";
    gates.push({
      gate_id: BUDGET_GATE_ID,
      title: "Budget",
      status,
      reason: budgets.length === 0 ? "the budget was not evaluated" : budgets.map((b) => b.reason ?? "").join("; "),
      evidence_refs: evaluationRefs(budgets),
    });
  }
  return gates;
}

/** The run's outcome from its gates: any failed gate fails it; else any inconclusive one leaves it inconclusive. */
export function decideVerdict(gates: readonly GateDecision[]) {
  if (gates.some((gate) => gate.status === "failed")) return { status: "COMPLETED", verdict: "FAIL" } as const;
  if (gates.some((gate) => gate.status === "inconclusive")) {
    return { status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" } as const;
  }
  return { status: "COMPLETED", verdict: "PASS" } as const;
}
