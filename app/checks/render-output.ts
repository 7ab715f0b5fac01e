import { renderDecisionSummary, renderDecisionTitle } from "../../server/releases/report/render-markdown.js";
import type { GateView } from "./gate-view.js";

/** GitHub's limit on a check run's summary. */
export const SUMMARY_LIMIT = 65_535;
const TITLE_LIMIT = 70;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The check run's title (at most 70 characters): what was decided, in numbers, or what keeps the commit from being gated. */
export function renderTitle(view: GateView): string {
  return view.kind === "problem" ? clip(view.problem.title, TITLE_LIMIT) : renderDecisionTitle(view);
}

/** The check run's summary (Markdown), under GitHub's limit. */
export function renderSummary(view: GateView, absolute: (ref: string) => string, annotationsLeftOut: number): string {
  return view.kind === "problem"
    ? clip(view.problem.summary, SUMMARY_LIMIT)
    : renderDecisionSummary(view, absolute, { limit: SUMMARY_LIMIT, annotationsLeftOut });
}
