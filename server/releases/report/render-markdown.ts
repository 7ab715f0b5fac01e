import type { DecisionReason } from "../../contract/index.js";
import type { DecisionReport, RunReport } from "./report.js";

const TITLE_LIMIT = 70;

const cell = (text: string) => text.replaceAll("|", "\\|").replace(/\s*\n\s*/g, " ");
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A decision's title (at most 70 characters): what was decided, in numbers. */
export function renderDecisionTitle({ decision }: Pick<DecisionReport, "decision">): string {
  const gates = decision.reasons.filter((r) => r.gate_id !== null);
  const count = (status: DecisionReason["status"]) => decision.reasons.filter((r) => r.status === status).length;
  if (decision.status === "PENDING") {
    const done = decision.planned.length - decision.reasons.filter((r) => r.status === "pending").length;
    return clip(`Release pending: ${done} of ${plural(decision.planned.length, "run")} finished`, TITLE_LIMIT);
  }
  if (decision.status === "ALLOWED") {
    const waived = count("waived");
    return clip(`Release allowed: ${gates.length - waived} of ${plural(gates.length, "gate")} passed${waived ? `, ${waived} waived` : ""}`, TITLE_LIMIT);
  }
  const failed = count("failed");
  const unsure = count("inconclusive");
  const errors = decision.reasons.filter((r) => r.status === "error" && r.run_id !== null).length;
  const gaveUp = decision.reasons.filter((r) => r.status === "error" && r.run_id === null).length;
  const parts = [
    failed && `${failed} of ${plural(gates.length, "gate")} failed`,
    unsure && `${plural(unsure, "gate")} inconclusive`,
    errors && `${plural(errors, "run")} could not be judged`,
    gaveUp && `${plural(gaveUp, "run")} never started (waited in vain)`,
    count("untested") && "nothing was tested",
  ].filter(Boolean);
  return clip(`Release blocked: ${parts.join(", ")}`, TITLE_LIMIT);
}

function runSection(run: RunReport, absolute: (ref: string) => string, decisionReasons: readonly DecisionReason[]): string[] {
  const { evidence } = run;
  const lines = [
    `#### ${cell(run.specName)} in ${cell(run.environmentName)}: ${evidence.verdict} ([evidence](${absolute(evidence.links.self)}))`,
    "",
    "| Gate | Status | Reason | Evidence |",
    "|---|---|---|---|",
  ];
  for (const gate of evidence.gates) {
    const waived = decisionReasons.find((r) => r.run_id === evidence.run_id && r.gate_id === gate.id && r.status === "waived");
    const refs = gate.evidence_refs.slice(0, 3).map((ref, i) => `[${i + 1}](${absolute(ref)})`).join(" ");
    const more = gate.evidence_refs.length > 3 ? ` +${gate.evidence_refs.length - 3}` : "";
    lines.push(`| ${cell(gate.id)} | ${waived ? `waived ([waiver](${absolute(waived.waiver_ref!)}))` : gate.status} | ${cell(gate.reason)} | ${refs}${more} |`);
  }
  if (evidence.failure) lines.push("", `The run could not be judged: \`${evidence.failure.cause}\`: ${cell(evidence.failure.message)}`);
  if (run.unmet.length > 0) {
    lines.push("", "| Metric | Scope | Score | Threshold | Judge | Evidence |", "|---|---|---|---|---|---|");
    for (const e of run.unmet) {
      lines.push(`| \`${cell(e.metric_id)}\` ${e.status} | ${e.scope} | ${e.score} | ${e.threshold} | ${cell(`${e.judge.provider}/${e.judge.model}`)} | [evaluation](${absolute(`/v1/runs/${e.run_id}/evaluations/${e.evaluation_id}`)}) |`);
    }
  }
  if (run.findings.length > 0) {
    lines.push("", `Findings: ${run.findings.map((f) => `**${f.severity}** [${cell(f.title)}](${absolute(`/v1/runs/${f.run_id}/findings/${f.finding_id}`)})`).join("; ")}`);
  }
  lines.push("", `Spec \`${evidence.spec_version}\`${run.specPath ? ` (\`${run.specPath}\`)` : ""}, agent version \`${cell(evidence.agent_version)}\`, environment \`${cell(evidence.environment)}\`.`, "");
  return lines;
}

/**
 * A decision's summary (Markdown): the decision, a gate table per run, the failed and inconclusive
 * evaluations, the findings, what was tested, and links to the evidence. Kept under `limit`
 * characters (a check run's or a job summary's): what does not fit is cut, and a footer says so
 * and where to read the rest.
 */
export function renderDecisionSummary(
  view: DecisionReport,
  absolute: (ref: string) => string,
  { limit, annotationsLeftOut = 0 }: { limit: number; annotationsLeftOut?: number },
): string {
  const { decision } = view;
  const subject = "repository" in decision.subject ? `\`${decision.subject.repository}@${decision.subject.commit_sha.slice(0, 7)}\`` : `${decision.subject.run_ids.length} runs`;
  const icon = { ALLOWED: "✅", BLOCKED: "❌", PENDING: "⏳" }[decision.status];
  const head = [
    `### ${icon} Release ${decision.status.toLowerCase()}`,
    "",
    `Decision [\`${decision.decision_id}\`](${absolute(decision.links.self)}) for ${subject}, attempt ${decision.attempt}: ` +
      `${plural(decision.planned.length, "planned run")}.`,
    "",
    ...(view.approval ? [`A pull request from a fork: its runs were approved by @${view.approval.login} (${view.approval.permission} access) at ${view.approval.pressed_at}.`, ""] : []),
  ];
  // What has no run to show it: runs not started (or waiting), a wait given up, nothing planned.
  const pending = decision.reasons.filter((r) => r.run_id === null || r.status === "pending").map((r) => `- ${cell(r.reason)}`);
  const body = [...(pending.length > 0 ? [...pending, ""] : []), ...view.runs.flatMap((run) => runSection(run, absolute, decision.reasons))];
  const leftOut = annotationsLeftOut > 0 ? [`${plural(annotationsLeftOut, "more annotation")} not shown: read them in the evidence.`] : [];
  const footer = (cut: number) => [
    ...leftOut,
    ...(cut > 0 ? [`_${plural(cut, "line")} cut to fit; the whole decision: ${absolute(decision.links.self)}_`] : []),
  ];
  let kept = body;
  const text = (lines: string[], cut: number) => [...head, ...lines, ...footer(cut)].join("\n");
  while (text(kept, body.length - kept.length).length > limit && kept.length > 0) kept = kept.slice(0, Math.floor(kept.length * 0.9));
  return text(kept, body.length - kept.length);
}
