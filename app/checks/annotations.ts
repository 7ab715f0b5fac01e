import { specAnnotations } from "../../server/releases/report/spec-annotations.js";
import type { GateView } from "./gate-view.js";

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

/**
 * One annotation per failed or inconclusive check of the planned runs (or per problem that kept
 * the commit from being gated), at the spec file and line that asked for it, failures first.
 * Returns the ones to send (at most MAX_ANNOTATIONS) and how many there were in all.
 */
export function toAnnotations(
  view: GateView,
  absolute: (ref: string) => string,
): { annotations: CheckAnnotation[]; total: number } {
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
      : specAnnotations(view, absolute).map(({ line, level, ...rest }) => ({
          ...rest,
          start_line: line,
          end_line: line,
          annotation_level: level,
        }));
  return { annotations: all.slice(0, MAX_ANNOTATIONS), total: all.length };
}
