import { evaluationPath, type TestSpecDocument } from "../contract/index.js";
import type { EvaluationDraft } from "./evaluate-expectations.js";

export type GateStatus = "passed" | "failed" | "inconclusive";

export interface GateDecision {
  gate_id: string;
  title: string | null;
  status: GateStatus;
  reason: string;
  evidence_refs: string[];
}

export type StoredEvaluation = EvaluationDraft & { evaluation_id: string };

/**
 * Decides each gate of the spec from the run's evaluations. A gate whose evidence this version
 * cannot produce is inconclusive, never passed: the release fails closed.
 */
export function decideGates(spec: TestSpecDocument, runId: string, evaluations: readonly StoredEvaluation[]): GateDecision[] {
  const refs = (list: readonly StoredEvaluation[]) => list.map((e) => evaluationPath(runId, e.evaluation_id));
  return spec.gates.map((gate): GateDecision => {
    const base = { gate_id: gate.id, title: gate.title ?? null };
    const { require } = gate;
    if (require.expectations === "all") {
      const checks = evaluations.filter((e) => e.metric_id.startsWith("expect."));
      const failed = checks.filter((e) => e.status !== "passed");
      if (failed.length > 0) {
        return { ...base, status: "failed", reason: `${failed.length} of ${checks.length} expectation check(s) failed`, evidence_refs: refs(failed) };
      }
      return { ...base, status: "passed", reason: `all ${checks.length} expectation check(s) passed`, evidence_refs: refs(checks) };
    }
    if (require.metric !== undefined) {
      return {
        ...base,
        status: "inconclusive",
        reason: `metric '${require.metric}' needs an LLM judge, which this version does not run: not evaluated`,
        evidence_refs: [],
      };
    }
    return {
      ...base,
      status: "inconclusive",
      reason: "security probes are not run by this version: findings not evaluated",
      evidence_refs: [],
    };
  });
}

/** The run's outcome from its gates: any failed gate fails it; else any inconclusive one leaves it inconclusive. */
export function decideVerdict(gates: readonly GateDecision[]) {
  if (gates.some((gate) => gate.status === "failed")) return { status: "COMPLETED", verdict: "FAIL" } as const;
  if (gates.some((gate) => gate.status === "inconclusive")) return { status: "INCONCLUSIVE", verdict: "INCONCLUSIVE" } as const;
  return { status: "COMPLETED", verdict: "PASS" } as const;
}
