import type { GateProblem } from "../../server/store/github.js";
/**
 * Why a commit is not gated now, shown as a completed check run with an annotation at each place:
 * something is wrong (a bad config, spec or binding: failure), or a person must act first (approve
 * a fork's runs: action_required).
 */
export type { GateProblem };

export function gateProblem(
  title: string,
  summary: string,
  annotations: GateProblem["annotations"] = [],
  { conclusion, action }: Pick<GateProblem, "conclusion" | "action"> = {},
): GateProblem {
  return { title, summary, annotations, ...(conclusion ? { conclusion } : {}), ...(action ? { action } : {}) };
}
