/**
 * Why a commit is not gated now, shown as a completed check run with an annotation at each place:
 * something is wrong (a bad config, spec or binding: failure), or a person must act first (approve
 * a fork's runs: action_required).
 */
export interface GateProblem {
  title: string;
  summary: string;
  annotations: { path: string; line: number; message: string }[];
  /** failure unless said otherwise. */
  conclusion?: "failure" | "action_required";
  /** The button the check run offers: re-run unless said otherwise. */
  action?: "rerun" | "approve" | "none";
}

export function gateProblem(
  title: string,
  summary: string,
  annotations: GateProblem["annotations"] = [],
  { conclusion, action }: Pick<GateProblem, "conclusion" | "action"> = {},
): GateProblem {
  return { title, summary, annotations, ...(conclusion ? { conclusion } : {}), ...(action ? { action } : {}) };
}
