import type { DecisionReport, RunReport } from "./report.js";

/** A failed (or inconclusive: a warning) check, at the spec file and line that asked for it, with its evidence. */
export interface SpecAnnotation {
  path: string;
  line: number;
  level: "failure" | "warning";
  title: string;
  message: string;
  raw_details?: string;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The line of a spec part (`scenarios[0].turns[1].expect[0]`), or of the nearest part that holds it. */
function lineOf(lines: Record<string, number>, specPath: string | null): number {
  let path = specPath ?? "";
  while (path) {
    if (lines[path] !== undefined) return lines[path]!;
    const parent = path.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
    if (parent === path) break;
    path = parent;
  }
  return 1;
}

function annotationsOfRun(run: RunReport, absolute: (ref: string) => string): SpecAnnotation[] {
  if (!run.specPath) return [];
  const path = run.specPath;
  const { run_id } = run.evidence;
  const fromEvaluations = run.unmet.map((evaluation): SpecAnnotation => ({
    path,
    line: lineOf(run.lines, evaluation.spec_path),
    level: evaluation.status === "failed" ? "failure" : "warning",
    title: clip(`${evaluation.metric_id} ${evaluation.status} (${run.environmentName})`, 255),
    message: clip(
      `${evaluation.reason}\nEvidence: ${[absolute(`/v1/runs/${run_id}/evaluations/${evaluation.evaluation_id}`), ...evaluation.evidence_refs.map(absolute)].join(" ")}`,
      60_000,
    ),
    raw_details: clip(JSON.stringify(evaluation, null, 2), 60_000),
  }));
  // A gate that no evaluation explains (a metric without a judge, say) is shown at its own line.
  const explained = new Set(run.unmet.map((e) => `/v1/runs/${run_id}/evaluations/${e.evaluation_id}`));
  const fromGates = run.evidence.gates
    .map((gate, position) => ({ gate, position }))
    .filter(
      ({ gate }) =>
        (gate.status === "failed" || gate.status === "inconclusive") &&
        !gate.evidence_refs.some((ref) => explained.has(ref)),
    )
    .map(({ gate, position }): SpecAnnotation => ({
      path,
      line: lineOf(run.lines, `gates[${position}]`),
      level: gate.status === "failed" ? "failure" : "warning",
      title: clip(`gate ${gate.id} ${gate.status} (${run.environmentName})`, 255),
      message: clip(
        `${gate.reason}${gate.evidence_refs.length > 0 ? `\nEvidence: ${gate.evidence_refs.map(absolute).join(" ")}` : ""}`,
        60_000,
      ),
    }));
  return [...fromEvaluations, ...fromGates];
}

/**
 * One annotation per failed or inconclusive check of the decided runs, at the spec file and line
 * that asked for it, failures first; none while the decision is pending.
 */
export function specAnnotations(report: DecisionReport, absolute: (ref: string) => string): SpecAnnotation[] {
  if (report.decision.status === "PENDING") return [];
  const all = report.runs.flatMap((run) => annotationsOfRun(run, absolute));
  return [...all.filter((a) => a.level === "failure"), ...all.filter((a) => a.level !== "failure")];
}
