import {
  runLinks,
  type Evaluation,
  type Evidence,
  type Pricing,
  type Run,
  type TestSpecDocument,
} from "../contract/index.js";
import { coverageTable } from "../specs/security-library/coverage-table.js";
import { costOf, type AgentUsage } from "../usage/agent-usage.js";
import type { GateResult, JudgeUsage } from "../store/index.js";
import type { ServiceStore } from "../store/service-store.js";

/**
 * The evidence document of a run: what was tested, where, which agent version, each gate's
 * decision with the evidence behind it, and the verdict. While the run is in progress the
 * verdict is PENDING and gates are empty.
 */
export async function buildEvidence(
  store: Pick<
    ServiceStore,
    | "getEnvironmentRow"
    | "listGateResults"
    | "countEvaluations"
    | "listRunFindings"
    | "getRunAgentUsage"
    | "getRunPricing"
    | "sumJudgeUsage"
    | "getTestSpecVersion"
    | "listEvaluations"
  >,
  run: Run,
): Promise<Evidence> {
  const environment = await store.getEnvironmentRow(run.environment_id);
  const { self: runPath, evidence: evidencePath, ...links } = runLinks(run.run_id);
  const counts = await store.countEvaluations(run.run_id);
  const total = counts.passed + counts.failed + counts.inconclusive + counts.errored;
  return {
    evidence_version: "1",
    run_id: run.run_id,
    project_id: run.project_id,
    test_spec_id: run.test_spec_id,
    spec_version: run.spec_version,
    agent_id: run.agent_id,
    agent_version: run.agent_version,
    environment: environment?.name ?? run.environment_id,
    environment_id: run.environment_id,
    executor: run.executor,
    uploaded_by: run.uploaded_by,
    status: run.status,
    verdict: run.verdict,
    failure: run.failure,
    decided_at: run.verdict === "PENDING" ? null : run.ended_at,
    gates: (await store.listGateResults(run.run_id)).map(toGate),
    evaluations: { total, ...counts },
    ...(await usageOf(await store.getRunAgentUsage(run.run_id), await store.getRunPricing(run.run_id), () =>
      store.sumJudgeUsage(run.run_id),
    )),
    findings: await store.listRunFindings(run.run_id),
    security_coverage: await securityCoverageOf(store, run),
    links: { run: runPath, self: evidencePath, ...links },
  };
}

/** The run's coverage table, from its spec's probes and their evaluations; null without probes. */
async function securityCoverageOf(
  store: Pick<ServiceStore, "getTestSpecVersion" | "listEvaluations">,
  run: Run,
): Promise<Evidence["security_coverage"]> {
  const spec = (await store.getTestSpecVersion(run.test_spec_id, run.spec_version))?.spec as
    TestSpecDocument | undefined;
  if (!spec || ((spec.security ?? []).length === 0 && (spec.security_coverage ?? []).length === 0)) return null;
  const probes: Evaluation[] = [];
  for (;;) {
    const page = await store.listEvaluations(run.run_id, { kind: "probe" }, probes.at(-1)?.evaluation_id, 1000);
    probes.push(...page);
    if (page.length < 1000) break;
  }
  return coverageTable(spec, probes);
}

/** `judge` is read only for a run with usage. */
async function usageOf(
  usage: AgentUsage | null,
  pricing: Pricing,
  judge: () => Promise<JudgeUsage>,
): Promise<Pick<Evidence, "usage" | "usage_detail">> {
  if (!usage) return { usage: null, usage_detail: null };
  const { by_model, latency_ms_p95, ...totals } = usage;
  const cost = costOf(by_model, pricing);
  return {
    usage: totals,
    usage_detail: {
      by_model: by_model ?? {},
      cost_usd: cost.usd,
      cost_unknown: cost.why,
      latency_ms_p95: latency_ms_p95 ?? null,
      judge: await judge(),
    },
  };
}

function toGate(gate: GateResult) {
  return {
    id: gate.gate_id,
    gate_id: gate.gate_id,
    title: gate.title,
    status: gate.status,
    reason: gate.reason,
    evidence_refs: gate.evidence_refs,
  };
}
