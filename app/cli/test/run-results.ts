import type { Evaluation, Evidence, Run, TestSpecDocument } from "../../../server/contract/index.js";
import { agentExcerpt, type AgentExcerpt } from "../../../server/runs/agent-excerpt.js";
import { buildEvidence } from "../../../server/runs/build-evidence.js";
import { wilsonInterval } from "../../../server/specs/pass-rate.js";
import type { ServiceStore } from "../../../server/store/service-store.js";
import { parseSpecPath } from "../did-you-mean.js";

/** One check of one case, over its repeats: what the table shows. */
export interface CheckRow {
  case: string;
  check: string;
  kind: string;
  metric_id: string;
  spec_path: string | null;
  line: number | undefined;
  passed: number;
  failed: number;
  inconclusive: number;
  errored: number;
  total: number;
  /** The 95% Wilson interval of its pass rate. */
  interval: { lower: number; upper: number };
}

/** A check of a case that did not pass every time, with what the agent did where it did not. */
export interface UnmetCheck extends Omit<CheckRow, "interval"> {
  status: "failed" | "errored" | "inconclusive";
  reason: string;
  /** The first few conversations where it did not pass: what the agent said and called. */
  excerpts: AgentExcerpt[];
  evaluation_ids: string[];
}

/** A run of one spec file, read back from the store once it ended. */
export interface RunResult {
  spec: { path: string; name: string; spec_version: string };
  run: Run;
  evidence: Evidence;
  /** Gates `--scenario` left out: they judged nothing that was run. */
  droppedGates: string[];
  checks: CheckRow[];
  unmet: UnmetCheck[];
  /** Evaluations of the whole run (token budget) that did not pass. */
  unmetRunWide: Evaluation[];
}

/** Conversations whose evidence a failure shows at most. */
const EXCERPTS_PER_CHECK = 3;
const PAGE = 500;

const UNMET = ["failed", "errored", "inconclusive"] as const;

/** Every evaluation of a run in creation order, or those of one status. */
export function* evaluationsOf(store: ServiceStore, runId: string, status?: string): Generator<Evaluation> {
  for (let after: string | undefined; ;) {
    const page = store.listEvaluations(runId, { status }, after, PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = page.at(-1)!.evaluation_id;
  }
}

const compactJson = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What a check is, as written in the spec: `tool_called {"name":"lookup_order"}`, `metric helpfulness`. */
export function checkLabel(
  document: TestSpecDocument,
  check: { kind: string; metric_id: string; spec_path: string | null },
): string {
  if (check.kind === "expectation" && check.spec_path) {
    let at: unknown = document;
    for (const part of parseSpecPath(check.spec_path)) {
      at = (at as Record<string | number, unknown> | undefined)?.[part];
    }
    const entry = at && typeof at === "object" ? Object.entries(at)[0] : undefined;
    if (entry) return clip(`${entry[0]} ${compactJson(entry[1])}`, 60);
  }
  return check.kind === "metric" ? `metric ${check.metric_id}` : check.metric_id;
}

/** The line a check is written at: its own spec_path's, or its metric's or probe's. */
function lineOf(
  document: TestSpecDocument,
  lines: Record<string, number>,
  check: Pick<CheckRow, "kind" | "metric_id" | "spec_path" | "case">,
) {
  if (check.spec_path && lines[check.spec_path] !== undefined) return lines[check.spec_path];
  const baseId = check.case.replace(/\[.*\]$/, "");
  const s = (document.scenarios ?? []).findIndex((scenario) => scenario.id === baseId);
  if (check.kind === "metric" && s >= 0) {
    const m = (document.scenarios![s]!.metrics ?? []).findIndex((metric) => metric.id === check.metric_id);
    return lines[`scenarios[${s}].metrics[${m}]`] ?? lines[`scenarios[${s}]`];
  }
  const p = (document.security ?? []).findIndex((probe) => probe.id === baseId);
  if (p >= 0) return lines[`security[${p}]`];
  return s >= 0 ? lines[`scenarios[${s}]`] : undefined;
}

/** A run's evidence and its checks by case, read back from the store. */
export function readRunResult(
  store: ServiceStore,
  run: Run,
  spec: { path: string; document: TestSpecDocument; lines: Record<string, number>; droppedGates: string[] },
): RunResult {
  const evidence = buildEvidence(store, run);
  const checks = store.tallyCases(run.run_id, Number.MAX_SAFE_INTEGER).map((tally): CheckRow => {
    const total = tally.passed + tally.failed + tally.inconclusive + tally.errored;
    const check = { ...tally, case: tally.scenario_id ?? "(run)" };
    return {
      case: check.case,
      check: checkLabel(spec.document, tally),
      kind: tally.kind,
      metric_id: tally.metric_id,
      spec_path: tally.spec_path,
      line: lineOf(spec.document, spec.lines, check),
      passed: tally.passed,
      failed: tally.failed,
      inconclusive: tally.inconclusive,
      errored: tally.errored,
      total,
      interval: wilsonInterval(tally.passed, total, 0.95),
    };
  });
  // The spec's order: by the line each check is written at, then by case.
  checks.sort(
    (a, b) =>
      (a.line ?? Infinity) - (b.line ?? Infinity) || a.case.localeCompare(b.case) || a.check.localeCompare(b.check),
  );

  const unmetByCheck = new Map<string, Evaluation[]>();
  const unmetRunWide: Evaluation[] = [];
  for (const status of UNMET) {
    for (const evaluation of evaluationsOf(store, run.run_id, status)) {
      if (evaluation.conversation_id === null) {
        unmetRunWide.push(evaluation);
        continue;
      }
      const key = JSON.stringify([
        evaluation.scenario_id,
        evaluation.kind,
        evaluation.metric_id,
        evaluation.kind === "expectation" ? evaluation.spec_path : null,
      ]);
      unmetByCheck.set(key, [...(unmetByCheck.get(key) ?? []), evaluation]);
    }
  }
  const unmet = checks.flatMap((row): UnmetCheck[] => {
    const key = JSON.stringify([row.case === "(run)" ? null : row.case, row.kind, row.metric_id, row.spec_path]);
    const evaluations = unmetByCheck.get(key);
    if (!evaluations) return [];
    const status = UNMET.find((s) => evaluations.some((e) => e.status === s))!;
    const { interval: _interval, ...counts } = row;
    return [
      {
        ...counts,
        status,
        reason: evaluations.find((e) => e.status === status)!.reason,
        excerpts: evaluations
          .slice(0, EXCERPTS_PER_CHECK)
          .map((evaluation) => agentExcerpt(store, evaluation))
          .filter((excerpt): excerpt is AgentExcerpt => excerpt !== undefined),
        evaluation_ids: evaluations.map((e) => e.evaluation_id),
      },
    ];
  });
  return {
    spec: {
      path: spec.path,
      name: store.getTestSpec(run.test_spec_id)?.name ?? run.test_spec_id,
      spec_version: run.spec_version,
    },
    run,
    evidence,
    droppedGates: spec.droppedGates,
    checks,
    unmet,
    unmetRunWide,
  };
}
