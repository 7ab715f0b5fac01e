import type { Evaluation, Evidence, Run, TestSpecDocument } from "../../../server/contract/index.js";
import {
  checkKey,
  checkLabel,
  checkLine,
  excerptsWanted,
  FAILURE_STATUSES,
  listFailures,
  type CaseCheck,
} from "../../../server/releases/report/failures.js";
import { agentExcerpts, type AgentExcerpt } from "../../../server/runs/agent-excerpt.js";
import { buildEvidence } from "../../../server/runs/build-evidence.js";
import { wilsonInterval } from "../../../server/specs/pass-rate.js";
import type { ServiceStore } from "../../../server/store/service-store.js";

/** One check of one case, over its repeats: what the table shows. */
export interface CheckRow extends CaseCheck {
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

const PAGE = 500;

/** Every evaluation of a run in creation order, or those of one status, read a page at a time. */
export async function evaluationsOf(store: ServiceStore, runId: string, status?: string): Promise<Evaluation[]> {
  const evaluations: Evaluation[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.listEvaluations(runId, { status }, after, PAGE);
    evaluations.push(...page);
    if (page.length < PAGE) return evaluations;
    after = page.at(-1)!.evaluation_id;
  }
}

/** A run's evidence and its checks by case, read back from the store. */
export async function readRunResult(
  store: ServiceStore,
  run: Run,
  spec: { path: string; document: TestSpecDocument; lines: Record<string, number>; droppedGates: string[] },
): Promise<RunResult> {
  const evidence = await buildEvidence(store, run);
  const checks = (await store.tallyCases(run.run_id, Number.MAX_SAFE_INTEGER)).map((tally): CheckRow => {
    const total = tally.passed + tally.failed + tally.inconclusive + tally.errored;
    const check = { ...tally, case: tally.scenario_id ?? "(run)" };
    return {
      case: check.case,
      check: checkLabel(spec.document, tally),
      kind: tally.kind,
      metric_id: tally.metric_id,
      spec_path: tally.spec_path,
      line: checkLine(spec.document, spec.lines, check),
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

  const unmetEvaluations: Evaluation[] = [];
  for (const status of FAILURE_STATUSES) unmetEvaluations.push(...(await evaluationsOf(store, run.run_id, status)));
  const unmetRunWide = unmetEvaluations.filter((evaluation) => evaluation.conversation_id === null);
  const source = {
    evaluations: unmetEvaluations
      .filter((evaluation) => evaluation.conversation_id !== null)
      .sort((a, b) => (a.evaluation_id < b.evaluation_id ? -1 : 1)),
    document: spec.document,
    lines: spec.lines,
  };
  const failures = listFailures(source, await agentExcerpts(store, excerptsWanted(source, { shown: Infinity })));
  const rows = new Map(
    checks.map((row) => [checkKey({ ...row, scenario_id: row.case === "(run)" ? null : row.case }), row]),
  );
  const unmet = failures.flatMap((failure): UnmetCheck[] => {
    const row = rows.get(checkKey({ ...failure, scenario_id: failure.case === "(run)" ? null : failure.case }));
    if (!row) return [];
    const { interval: _interval, ...counts } = row;
    return [
      {
        ...counts,
        status: failure.status,
        reason: failure.reason,
        excerpts: failure.excerpts,
        evaluation_ids: failure.evaluation_ids,
      },
    ];
  });
  return {
    spec: {
      path: spec.path,
      name: (await store.getTestSpec(run.test_spec_id))?.name ?? run.test_spec_id,
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
