import {
  BUDGET_GATE_ID,
  evaluationPath,
  findingPath,
  type EvaluationKind,
  type GateSpec,
  type TestSpecDocument,
} from "../contract/index.js";
import type { EvaluationDraft, FindingDraft } from "./evaluator.js";
import { SEVERITY_RANK } from "../specs/severity-rank.js";
import { decideRate, percent } from "../specs/pass-rate.js";

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
  const evaluationRefs = (list: readonly StoredEvaluation[]) => list.map((e) => evaluationPath(runId, e.evaluation_id));
  const findingRefs = (list: readonly StoredFinding[]) => list.map((f) => findingPath(runId, f.finding_id));

  const ofKind = (kind: StoredEvaluation["kind"]) => inputs.evaluations.filter((e) => e.kind === kind);

  function expectationsGate(): Omit<GateDecision, "gate_id" | "title"> {
    const checks = ofKind("expectation");
    if (checks.length === 0) {
      const written = (spec.scenarios ?? []).some(
        (s) => (s.expect ?? []).length > 0 || s.turns.some((t) => (t.expect ?? []).length > 0),
      );
      return {
        status: "inconclusive",
        reason: written
          ? "no expectation was checked: no scenario conversation was evaluated"
          : "no expectation was checked: the spec's scenarios have none (a gate on expectations needs at least one)",
        evidence_refs: [],
      };
    }
    const failed = checks.filter((e) => e.status !== "passed");
    if (failed.length > 0) {
      return {
        status: "failed",
        reason: `${failed.length} of ${checks.length} expectation check(s) failed`,
        evidence_refs: evaluationRefs(failed),
      };
    }
    return {
      status: "passed",
      reason: `all ${checks.length} expectation check(s) passed`,
      evidence_refs: evaluationRefs(checks),
    };
  }

  function metricGate(
    metric: string,
    minPassRate: number,
    confidence: number | undefined,
  ): Omit<GateDecision, "gate_id" | "title"> {
    if (!inputs.judgeConfigured) {
      return {
        status: "inconclusive",
        reason: `metric '${metric}' needs an LLM judge; none is configured (ASSURE_JUDGE_BASE_URL, ASSURE_JUDGE_MODEL): not evaluated`,
        evidence_refs: [],
      };
    }
    const samples = ofKind("metric").filter((e) => e.metric_id === metric);
    if (samples.length === 0) {
      return {
        status: "inconclusive",
        reason: `metric '${metric}' has no samples: no conversation completed`,
        evidence_refs: [],
      };
    }
    const unjudged = samples.filter((e) => e.status === "inconclusive" || e.status === "errored");
    if (unjudged.length > 0) {
      return {
        status: "inconclusive",
        reason: `${unjudged.length} of ${samples.length} sample(s) of '${metric}' could not be judged`,
        evidence_refs: evaluationRefs(unjudged),
      };
    }
    const passes = samples.filter((e) => e.status === "passed").length;
    const rate = passes / samples.length;
    const failing = samples.filter((e) => e.status === "failed");
    const observed = `${passes}/${samples.length} sample(s) passed (${percent(rate)}); the bar is ${percent(minPassRate)}`;
    if (confidence === undefined) {
      return rate >= minPassRate
        ? { status: "passed", reason: observed, evidence_refs: evaluationRefs(samples) }
        : { status: "failed", reason: observed, evidence_refs: evaluationRefs(failing) };
    }
    const decision = decideRate(passes, samples.length, minPassRate, confidence);
    const interval = `${percent(confidence)} Wilson interval [${percent(decision.lower)}, ${percent(decision.upper)}]`;
    if (decision.status === "passed") {
      return { status: "passed", reason: `${observed}; ${interval} clears it`, evidence_refs: evaluationRefs(samples) };
    }
    if (decision.status === "failed") {
      return {
        status: "failed",
        reason: `${observed}; ${interval} is below it`,
        evidence_refs: evaluationRefs(failing),
      };
    }
    const settle =
      decision.samplesToSettle === null
        ? "more samples at this rate would not settle it"
        : `about ${decision.samplesToSettle - samples.length} more sample(s) at this rate would settle it`;
    return {
      status: "inconclusive",
      reason: `${observed}; ${interval} straddles it: ${settle}`,
      evidence_refs: evaluationRefs(samples),
    };
  }

  function severityGate(max: keyof typeof SEVERITY_RANK): Omit<GateDecision, "gate_id" | "title"> {
    const over = inputs.findings.filter((f) => SEVERITY_RANK[f.severity] > SEVERITY_RANK[max]);
    if (over.length > 0) {
      const worst = over.map((f) => f.severity).sort((a, b) => SEVERITY_RANK[b] - SEVERITY_RANK[a])[0];
      return {
        status: "failed",
        reason: `${over.length} finding(s) above ${max} (worst: ${worst})`,
        evidence_refs: findingRefs(over),
      };
    }
    const probes = ofKind("probe");
    const detectors = ofKind("detector");
    return {
      status: "passed",
      reason:
        `no finding above ${max} (${probes.length} probe conversation(s) and ${detectors.length} detector(s) checked, ` +
        `${inputs.findings.length} finding(s) at or below)`,
      evidence_refs: [...evaluationRefs(probes), ...evaluationRefs(detectors), ...findingRefs(inputs.findings)],
    };
  }

  const gates = spec.gates.map((gate: GateSpec): GateDecision => {
    const { require } = gate;
    const decided =
      require.expectations === "all"
        ? expectationsGate()
        : require.metric !== undefined
          ? metricGate(require.metric, require.min_pass_rate ?? 1, require.confidence)
          : require.max_finding_severity !== undefined
            ? severityGate(require.max_finding_severity)
            : {
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
