import type { GateView, RunView } from "./gate-view.js";

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: "notice" | "warning" | "failure";
  title: string;
  message: string;
  raw_details?: string;
}

/** GitHub takes at most 50 annotations per request; more go in successive updates. */
export const ANNOTATIONS_PER_REQUEST = 50;
/** Beyond this many, annotations are counted in the summary, not sent. */
export const MAX_ANNOTATIONS = 200;

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

function annotationsOfRun(run: RunView, absolute: (ref: string) => string): CheckAnnotation[] {
  if (!run.specPath) return [];
  const path = run.specPath;
  const { run_id } = run.evidence;
  const fromEvaluations = run.unmet.map(
    (evaluation): CheckAnnotation => ({
      path,
      start_line: lineOf(run.lines, evaluation.spec_path),
      end_line: lineOf(run.lines, evaluation.spec_path),
      annotation_level: evaluation.status === "failed" ? "failure" : "warning",
      title: clip(`${evaluation.metric_id} ${evaluation.status} (${run.environmentName})`, 255),
      message: clip(`${evaluation.reason}\nEvidence: ${[absolute(`/v1/runs/${run_id}/evaluations/${evaluation.evaluation_id}`), ...evaluation.evidence_refs.map(absolute)].join(" ")}`, 60_000),
      raw_details: clip(JSON.stringify(evaluation, null, 2), 60_000),
    }),
  );
  // A gate that no evaluation explains (a metric without a judge, say) is shown at its own line.
  const explained = new Set(run.unmet.map((e) => `/v1/runs/${run_id}/evaluations/${e.evaluation_id}`));
  const fromGates = run.evidence.gates
    .map((gate, position) => ({ gate, position }))
    .filter(({ gate }) => (gate.status === "failed" || gate.status === "inconclusive") && !gate.evidence_refs.some((ref) => explained.has(ref)))
    .map(
      ({ gate, position }): CheckAnnotation => ({
        path,
        start_line: lineOf(run.lines, `gates[${position}]`),
        end_line: lineOf(run.lines, `gates[${position}]`),
        annotation_level: gate.status === "failed" ? "failure" : "warning",
        title: clip(`gate ${gate.id} ${gate.status} (${run.environmentName})`, 255),
        message: clip(`${gate.reason}${gate.evidence_refs.length > 0 ? `\nEvidence: ${gate.evidence_refs.map(absolute).join(" ")}` : ""}`, 60_000),
      }),
    );
  return [...fromEvaluations, ...fromGates];
}

/**
 * One annotation per failed or inconclusive check of the planned runs (or per problem that kept
 * the commit from being gated), at the spec file and line that asked for it, failures first.
 * Returns the ones to send (at most MAX_ANNOTATIONS) and how many there were in all.
 */
export function toAnnotations(view: GateView, absolute: (ref: string) => string): { annotations: CheckAnnotation[]; total: number } {
  const all: CheckAnnotation[] =
    view.kind === "problem"
      ? view.problem.annotations.map((a) => ({
          path: a.path,
          start_line: a.line,
          end_line: a.line,
          annotation_level: "failure",
          title: "assure cannot gate this commit",
          message: clip(a.message, 60_000),
        }))
      : view.decision.status === "PENDING"
        ? []
        : view.runs.flatMap((run) => annotationsOfRun(run, absolute));
  const ordered = [...all.filter((a) => a.annotation_level === "failure"), ...all.filter((a) => a.annotation_level !== "failure")];
  return { annotations: ordered.slice(0, MAX_ANNOTATIONS), total: all.length };
}
