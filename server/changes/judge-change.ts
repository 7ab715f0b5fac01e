import {
  evaluationPath,
  type CaseChange,
  type CaseFlakiness,
  type DecisionChanges,
  type GateSpec,
  type TestSpecDocument,
  type UsageChange,
} from "../contract/index.js";
import type { UsageFigures } from "../usage/agent-usage.js";
import { requirementOf } from "../specs/gate-requirements/index.js";
import { specCases, type SpecCase } from "./cases.js";
import type { CaseClass, NoRegression } from "./compare-case.js";
import { caseIdOf, compareCases, type CaseComparison, type CaseEvaluation } from "./compare-cases.js";
import { describeFlakiness } from "./flakiness.js";

/** What the classes are judged by where no gate of the spec says: the spec format's defaults. */
export const DEFAULT_NO_REGRESSION: NoRegression = { max_drop: 0.05, confidence: 0.95 };

/** An evaluation as a comparison reads it: one per conversation and check, with one evaluation to cite. */
export type CitedEvaluation = CaseEvaluation & { evaluation_id: string };

/** One side of a planned run's comparison: the run, the spec version it ran, its evaluations. */
export interface ChangeSide {
  run_id: string;
  spec: TestSpecDocument;
  evaluations: readonly CitedEvaluation[];
  /** What its agent used; unknown figures are null. */
  usage?: UsageFigures | undefined;
}

type CaseTally = NonNullable<CaseChange["base"]>;
/** A case of a planned run that is not unchanged: how, with its statistics and the evidence on each side. */
export type CaseChangeView = CaseChange;

/** A gate's `no_regression` as judged for one run: it fails on a regressed case. */
export interface GateChange {
  gate_id: string;
  /** quarantined: only cases quarantined as flaky regressed. */
  status: "passed" | "failed" | "quarantined";
  reason: string;
  evidence_refs: string[];
  baseline_refs: string[];
}

export interface SlotChange {
  cases: CaseChangeView[];
  counts: Record<CaseClass, number>;
  gates: GateChange[];
  /** The run's cases that are flaky on the base branch, changed or not. */
  flaky: FlakyCase[];
  /** What the run used against the baseline's run; null without one. */
  usage: UsageChange | null;
}

export type FlakyCase = CaseFlakiness & { run_id: string; case_id: string };

/** The base side of a comparison, or why there is none. */
export type BaseOf = { side: ChangeSide; commit_sha: string } | { side: null; why: string };

/** The cases a gate's `no_regression` covers: alone, all of them; beside another requirement, that requirement's. */
export function coveredBy(gate: GateSpec): (c: SpecCase) => boolean {
  return requirementOf(gate.require)?.covers(gate.require) ?? (() => true);
}

const short = (sha: string) => sha.slice(0, 7);

/** A count of each class of case, all none. */
const noCases = (): Record<CaseClass, number> => ({
  regressed: 0,
  improved: 0,
  unchanged: 0,
  inconclusive: 0,
  new: 0,
  removed: 0,
});
const REFS_PER_CASE = 3;

/**
 * Compares one planned run with its baseline's run of the same spec and environment, case by
 * case, and judges each `no_regression` gate of the head's spec: failed when a case it covers
 * regressed. A drop that is not significant is listed as inconclusive, with the repeats that
 * would settle it, and does not fail the gate: only evidence of a regression does.
 */
export function judgeChange(
  head: ChangeSide,
  base: BaseOf,
  flaky: ReadonlyMap<string, CaseFlakiness> = new Map(),
): SlotChange {
  const gates = head.spec.gates.filter((gate) => gate.require.no_regression);
  const counts = noCases();
  const flakyCases = [...flaky].map(([caseId, f]): FlakyCase => ({ run_id: head.run_id, case_id: caseId, ...f }));
  if (!base.side) {
    return {
      cases: [],
      counts,
      flaky: flakyCases,
      usage: null,
      gates: gates.map((gate) => ({
        gate_id: gate.id,
        status: "passed",
        reason: `no_regression: ${base.why}`,
        evidence_refs: [],
        baseline_refs: [],
      })),
    };
  }
  const baseSide = base.side;
  const headCases = new Map([...specCases(head.spec)].map((c) => [c.case_id, c]));
  const baseCases = new Map([...specCases(baseSide.spec)].map((c) => [c.case_id, c]));
  const gatesOf = (caseId: string) =>
    gates.filter((gate) => coveredBy(gate)(headCases.get(caseId) ?? baseCases.get(caseId)!));

  // Each case is classed by the first gate that covers it (the defaults when none does).
  const policies = new Map<string, NoRegression>();
  for (const gate of gates) policies.set(JSON.stringify(gate.require.no_regression), gate.require.no_regression!);
  const comparedUnder = new Map(
    [...policies].map(([key, policy]) => [
      key,
      new Map(compareCases(baseSide, head, policy).map((c) => [c.case_id, c])),
    ]),
  );
  const underDefaults = new Map(compareCases(baseSide, head, DEFAULT_NO_REGRESSION).map((c) => [c.case_id, c]));

  const headRefs = refsByCase(head);
  const baseRefs = refsByCase(baseSide);
  const cases: CaseChangeView[] = [];
  for (const [caseId, fallback] of underDefaults) {
    const covering = gatesOf(caseId);
    const comparison =
      covering.length > 0
        ? comparedUnder.get(JSON.stringify(covering[0]!.require.no_regression))!.get(caseId)!
        : fallback;
    counts[comparison.class]++;
    if (comparison.class === "unchanged") continue;
    cases.push({
      ...view(
        comparison,
        head.run_id,
        baseSide.run_id,
        headRefs.get(caseId) ?? [],
        baseRefs.get(caseId) ?? [],
        covering.map((g) => g.id),
      ),
      flaky: flaky.get(caseId) ?? null,
    });
  }

  const judged = gates.map((gate): GateChange => {
    const mine = cases.filter((c) => c.gate_ids.includes(gate.id));
    const regressed = mine.filter((c) => c.class === "regressed" && !c.flaky?.quarantined);
    const quarantined = mine.filter((c) => c.class === "regressed" && c.flaky?.quarantined);
    const of = (cls: CaseClass) => mine.filter((c) => c.class === cls).length;
    const against = `against the baseline ${short(base.commit_sha)}`;
    const listed = (list: CaseChangeView[]) =>
      `${list.slice(0, 5).map(describe).join("; ")}${list.length > 5 ? "; …" : ""}`;
    const aside =
      quarantined.length > 0 ? ` (${quarantined.length} more quarantined as flaky: ${listed(quarantined)})` : "";
    if (regressed.length > 0) {
      return {
        gate_id: gate.id,
        status: "failed",
        reason: `no_regression: ${regressed.length} case(s) regressed ${against}: ${listed(regressed)}${aside}`,
        evidence_refs: [...regressed, ...quarantined].flatMap((c) => c.head_refs),
        baseline_refs: [...regressed, ...quarantined].flatMap((c) => c.base_refs),
      };
    }
    if (quarantined.length > 0) {
      return {
        gate_id: gate.id,
        status: "quarantined",
        reason: `no_regression: only cases quarantined as flaky regressed ${against}, so it does not block: ${listed(quarantined)}`,
        evidence_refs: quarantined.flatMap((c) => c.head_refs),
        baseline_refs: quarantined.flatMap((c) => c.base_refs),
      };
    }
    const unsure = mine.filter((c) => c.class === "inconclusive");
    const notes = [
      of("improved") && `${of("improved")} improved`,
      unsure.length && `${unsure.length} dropped without significance (${unsure.slice(0, 3).map(describe).join("; ")})`,
      of("new") && `${of("new")} new`,
      of("removed") && `${of("removed")} removed`,
    ].filter(Boolean);
    return {
      gate_id: gate.id,
      status: "passed",
      reason: `no_regression: no case regressed ${against}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`,
      evidence_refs: unsure.flatMap((c) => c.head_refs),
      baseline_refs: unsure.flatMap((c) => c.base_refs),
    };
  });
  return { cases, counts, gates: judged, flaky: flakyCases, usage: usageChange(head, baseSide) };
}

/** What the head's run used against the base's: each figure, and its relative change. */
function usageChange(head: ChangeSide, base: ChangeSide): UsageChange | null {
  if (!head.usage || !base.usage) return null;
  const figure = (key: keyof UsageFigures) => {
    const [b, h] = [base.usage![key], head.usage![key]];
    return { base: b, head: h, change: b === null || h === null || b === 0 ? null : round((h - b) / b, 4) };
  };
  return {
    run_id: head.run_id,
    base_run_id: base.run_id,
    tokens: figure("tokens"),
    cost_usd: figure("cost_usd"),
    latency_ms_p95: figure("latency_ms_p95"),
  };
}

/** Up to three evaluations to cite per case on one side: the failed ones first. */
function refsByCase(side: ChangeSide): Map<string, string[]> {
  const grouped = new Map<string, CitedEvaluation[]>();
  for (const evaluation of side.evaluations) {
    const id = caseIdOf(evaluation);
    if (!id) continue;
    grouped.set(id, [...(grouped.get(id) ?? []), evaluation]);
  }
  return new Map(
    [...grouped].map(([id, list]) => [
      id,
      [...list.filter((e) => e.status === "failed"), ...list.filter((e) => e.status !== "failed")]
        .slice(0, REFS_PER_CASE)
        .map((e) => evaluationPath(side.run_id, e.evaluation_id)),
    ]),
  );
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const mean = (values: readonly number[] | undefined) =>
  values && values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null;

function view(
  c: CaseComparison,
  runId: string,
  baseRunId: string,
  headRefs: string[],
  baseRefs: string[],
  gateIds: string[],
): CaseChangeView {
  const tally = (s: CaseComparison["base"]): CaseTally | null => {
    if (!s) return null;
    const m = mean(s.scores);
    return { passes: s.passes, runs: s.runs, mean_score: m === null ? null : round(m) };
  };
  const worse = c.class !== "improved";
  return {
    run_id: runId,
    base_run_id: c.base ? baseRunId : null,
    case_id: c.case_id,
    class: c.class as CaseChangeView["class"],
    base: tally(c.base),
    head: tally(c.head),
    rate_drop: c.rates ? round(-c.rates.effect) : null,
    rate_p: c.rates ? round(worse ? c.rates.pLower : c.rates.pHigher, 4) : null,
    score_drop: c.scores ? round(c.scores.drop) : null,
    score_p: c.scores ? round(worse ? c.scores.pLower : c.scores.pHigher, 4) : null,
    more_repeats_to_settle: c.moreRepeatsToSettle,
    head_refs: c.head ? headRefs : [],
    base_refs: c.base ? baseRefs : [],
    gate_ids: gateIds,
    flaky: null,
  };
}

/** `'full-refund expect[0]' passed 5/5 → 1/5 (p = 0.024)`, with the score's drop when it is judged. */
export function describe(c: CaseChangeView): string {
  const rate =
    c.base && c.head
      ? ` passed ${c.base.passes}/${c.base.runs} → ${c.head.passes}/${c.head.runs}${c.rate_p !== null ? ` (p = ${c.rate_p})` : ""}`
      : "";
  const score =
    c.score_drop !== null && c.base?.mean_score != null && c.head?.mean_score != null
      ? `, mean score ${c.base.mean_score} → ${c.head.mean_score}${c.score_p !== null ? ` (p = ${c.score_p})` : ""}`
      : "";
  const settle =
    c.class === "inconclusive" && c.more_repeats_to_settle !== null
      ? `, ${c.more_repeats_to_settle} more repeat(s) on each side would settle it`
      : "";
  return `'${c.case_id}'${rate}${score}${settle}${c.flaky ? ` (${describeFlakiness(c.flaky)})` : ""}`;
}

/** A run's gate as a decision weighs it. */
export interface WeighedGate {
  gate_id: string;
  /** quarantined: failed, but only on cases quarantined as flaky; it does not block. */
  status: "passed" | "failed" | "inconclusive" | "waived" | "quarantined";
  reason: string;
  evidence_refs: string[];
  baseline_evidence_refs?: string[];
}

const ONLY_CHANGE = "no_regression is judged by the release decision";

/**
 * A run's gates with their `no_regression` judged: a gate fails when its run said so or a case
 * it covers regressed; the reasons and evidence of both parts are kept, the baseline's beside.
 */
export function withChange(gates: readonly WeighedGate[], change: SlotChange | undefined): WeighedGate[] {
  if (!change) return [...gates];
  const byGate = new Map(change.gates.map((g) => [g.gate_id, g]));
  return gates.map((gate) => {
    const judged = byGate.get(gate.gate_id);
    if (!judged) return gate;
    const alone = gate.reason.startsWith(ONLY_CHANGE);
    return {
      gate_id: gate.gate_id,
      status:
        judged.status === "failed"
          ? "failed"
          : judged.status === "quarantined" && gate.status === "passed"
            ? "quarantined"
            : gate.status,
      reason: alone ? judged.reason : `${gate.reason}; ${judged.reason}`,
      evidence_refs: [...(alone ? [] : gate.evidence_refs), ...judged.evidence_refs],
      baseline_evidence_refs: judged.baseline_refs,
    };
  });
}

const CLASS_ORDER: Record<CaseChange["class"], number> = {
  regressed: 0,
  inconclusive: 1,
  improved: 2,
  new: 3,
  removed: 4,
};
const MAX_LISTED = 500;

/** The decision's changes over its planned runs: counts, and the cases that changed, regressions first. */
export function summarizeChanges(slots: readonly SlotChange[]): DecisionChanges {
  const counts: DecisionChanges["counts"] = noCases();
  for (const slot of slots) for (const [cls, n] of Object.entries(slot.counts)) counts[cls as CaseClass] += n;
  const cases = slots.flatMap((slot) => slot.cases).sort((a, b) => CLASS_ORDER[a.class] - CLASS_ORDER[b.class]);
  const flaky = slots.flatMap((slot) => slot.flaky).slice(0, MAX_LISTED);
  const usage = slots.flatMap((slot) => slot.usage ?? []);
  return {
    counts,
    cases: cases.slice(0, MAX_LISTED),
    cases_left_out: Math.max(0, cases.length - MAX_LISTED),
    flaky,
    usage,
  };
}

/**
 * A run's failed gates as flakiness bears on them: a gate whose every cited failure is of a case
 * quarantined as flaky is `quarantined` (it does not block); one citing flaky cases otherwise
 * blocks as usual, labelled with their history. `caseOf` maps a cited evidence ref to its case.
 */
export function withFlakiness(
  gates: readonly WeighedGate[],
  caseOf: (ref: string) => string | undefined,
  flaky: ReadonlyMap<string, CaseFlakiness>,
): WeighedGate[] {
  if (flaky.size === 0) return [...gates];
  return gates.map((gate) => {
    if (gate.status !== "failed" || gate.evidence_refs.length === 0) return gate;
    const cited = gate.evidence_refs.map(caseOf);
    const flakyCited = [...new Set(cited)].filter((id): id is string => id !== undefined && flaky.has(id));
    if (flakyCited.length === 0) return gate;
    const labels = `${flakyCited
      .slice(0, 5)
      .map((id) => `'${id}' ${describeFlakiness(flaky.get(id)!)}`)
      .join("; ")}${flakyCited.length > 5 ? "; …" : ""}`;
    const allQuarantined = cited.every((id) => id !== undefined && flaky.get(id)?.quarantined);
    return allQuarantined
      ? {
          ...gate,
          status: "quarantined",
          reason: `${gate.reason}; quarantined, it does not block: every failure it cites is of a case flaky on the base branch (${labels})`,
        }
      : { ...gate, reason: `${gate.reason}; of the cases it cites, flaky on the base branch: ${labels}` };
  });
}
