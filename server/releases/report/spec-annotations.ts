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
  // The same check failing at the same line in several conversations (repeats, rows of a table) is
  // one annotation that says how many, with the evidence of each (the first five).
  const sameCheck = new Map<string, RunReport["unmet"][number][]>();
  for (const evaluation of run.unmet) {
    const key = JSON.stringify([evaluation.spec_path, evaluation.metric_id, evaluation.status, evaluation.reason]);
    sameCheck.set(key, [...(sameCheck.get(key) ?? []), evaluation]);
  }
  const evidenceOf = (evaluation: RunReport["unmet"][number]) =>
    `Evidence: ${[absolute(`/v1/runs/${run_id}/evaluations/${evaluation.evaluation_id}`), ...evaluation.evidence_refs.map(absolute)].join(" ")}`;
  const fromEvaluations = [...sameCheck.values()].map((group): SpecAnnotation => {
    const [evaluation] = group as [RunReport["unmet"][number], ...RunReport["unmet"]];
    const times = group.length > 1 ? `In ${group.length} conversations: ` : "";
    const more = group.length > 5 ? [`… and ${group.length - 5} more`] : [];
    return {
      path,
      line: lineOf(run.lines, evaluation.spec_path),
      level: evaluation.status === "failed" ? "failure" : "warning",
      title: clip(`${evaluation.metric_id} ${evaluation.status} (${run.environmentName})`, 255),
      message: clip([`${times}${evaluation.reason}`, ...group.slice(0, 5).map(evidenceOf), ...more].join("\n"), 60_000),
      raw_details: clip(JSON.stringify(evaluation, null, 2), 60_000),
    };
  });
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
      title: clip(`gate ${gate.gate_id} ${gate.status} (${run.environmentName})`, 255),
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
