import { EXECUTOR_GATE, POLICY_GATE, type CaseChange, type DecisionReason } from "../../contract/index.js";
import { excerptParts, FAILURES_SHOWN, type Failure } from "./failures.js";
import { codeSpan, inertCell } from "./markdown-text.js";
import type { DecisionReport, RunReport } from "./report.js";
import { findingsByCategory } from "../../runs/findings-by-category.js";

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
    const quarantined = count("quarantined");
    const aside = [waived && `${waived} waived`, quarantined && `${quarantined} quarantined`]
      .filter(Boolean)
      .join(", ");
    return clip(
      `Release allowed: ${gates.length - waived - quarantined} of ${plural(gates.length, "gate")} passed${aside ? `, ${aside}` : ""}`,
      TITLE_LIMIT,
    );
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

const MARK: Record<Failure["status"], string> = { failed: "❌", errored: "⚠️", inconclusive: "❔" };

/**
 * A run's checks that did not pass, as `assure test` names them: case, check, spec line, why, and
 * what the agent said and called where it did not pass — the first ones, then a count and the
 * evidence. Everything that comes from the spec or the agent is a code span.
 */
function failureSection(run: RunReport, absolute: (ref: string) => string): string[] {
  if (run.failures.length === 0) return [];
  const { run_id } = run.evidence;
  const lines = ["", `**Not passed** (${plural(run.failures.length, "check")}):`, ""];
  for (const failure of run.failures.slice(0, FAILURES_SHOWN)) {
    const where =
      run.specPath && failure.line !== undefined
        ? ` at ${codeSpan(`${run.specPath}:${failure.line}`)}`
        : failure.line !== undefined
          ? ` at line ${failure.line}`
          : "";
    const times = failure.evaluation_ids.length;
    const evidence = `[evidence](${absolute(`/v1/runs/${run_id}/evaluations/${failure.evaluation_ids[0]}`)})`;
    lines.push(
      `- ${MARK[failure.status]} ${codeSpan(failure.case)} ${codeSpan(failure.check)}${where}: ${failure.status}` +
        `${times > 1 ? ` in ${times} conversations` : ""}, ${codeSpan(clip(failure.reason, 300))} (${evidence})`,
    );
    const [excerpt] = failure.excerpts;
    if (excerpt) {
      const { at, reply, calls } = excerptParts(excerpt);
      lines.push(
        `  - ${at}: ${reply === null ? "no reply" : `said ${codeSpan(reply)}`}; ${calls === null ? "called no tool" : `called ${codeSpan(calls)}`}`,
      );
    }
  }
  const more = run.failures.length - FAILURES_SHOWN;
  if (more > 0) {
    lines.push(`- and ${plural(more, "more check")} not passed: [the evidence](${absolute(run.evidence.links.self)})`);
  }
  return lines;
}

function runSection(
  run: RunReport,
  absolute: (ref: string) => string,
  decisionReasons: readonly DecisionReason[],
): string[] {
  const { evidence } = run;
  const lines = [
    `#### ${cell(run.specName)} in ${cell(run.environmentName)}: ${evidence.verdict} ([evidence](${absolute(evidence.links.self)}))`,
    "",
    evidence.executor === "local"
      ? `Executed outside the service (executor: local), uploaded by \`${cell(evidence.uploaded_by ?? "")}\`; judged by the service.`
      : "Executed by the service.",
    "",
    "| Gate | Status | Reason | Evidence |",
    "|---|---|---|---|",
  ];
  // Gates of the decision's own about the run (not the run's): whether an uploaded run counts here.
  for (const reason of decisionReasons) {
    if (reason.run_id !== evidence.run_id || reason.gate_id !== EXECUTOR_GATE) continue;
    lines.push(`| ${EXECUTOR_GATE} | ${reason.status} | ${cell(reason.reason)} | |`);
  }
  for (const gate of evidence.gates) {
    // The decision's view of the gate: with its comparison against the base branch, and any waiver.
    const decided = decisionReasons.find((r) => r.run_id === evidence.run_id && r.gate_id === gate.gate_id);
    const refList = decided?.evidence_refs ?? gate.evidence_refs;
    const refs = refList
      .slice(0, 3)
      .map((ref, i) => `[${i + 1}](${absolute(ref)})`)
      .join(" ");
    const more = refList.length > 3 ? ` +${refList.length - 3}` : "";
    const baseRefs = (decided?.baseline_evidence_refs ?? [])
      .slice(0, 3)
      .map((ref, i) => `[base ${i + 1}](${absolute(ref)})`)
      .join(" ");
    const status =
      decided?.status === "waived"
        ? `waived ([waiver](${absolute(decided.waiver_ref!)}))`
        : (decided?.status ?? gate.status);
    lines.push(
      `| ${cell(gate.gate_id)} | ${status} | ${cell(decided?.reason ?? gate.reason)} | ${refs}${more}${baseRefs ? ` ${baseRefs}` : ""} |`,
    );
  }
  if (evidence.failure) {
    lines.push("", `The run could not be judged: \`${evidence.failure.cause}\`: ${cell(evidence.failure.message)}`);
  }
  lines.push(...failureSection(run, absolute));
  lines.push(...securitySection(run, absolute));
  lines.push(
    "",
    `Spec \`${evidence.spec_version}\`${run.specPath ? ` (\`${run.specPath}\`)` : ""}, agent version \`${cell(evidence.agent_version)}\`, environment \`${cell(evidence.environment)}\`.`,
    "",
  );
  return lines;
}

/** Findings a category's line links; the rest are counted. */
const FINDINGS_PER_CATEGORY = 5;

/** The run's findings by OWASP category, and its coverage table, when its spec probed security. */
function securitySection(run: RunReport, absolute: (ref: string) => string): string[] {
  const lines: string[] = [];
  for (const group of findingsByCategory(run.findings)) {
    const shown = group.findings
      .slice(0, FINDINGS_PER_CATEGORY)
      .map(
        (f) =>
          `**${f.severity}** [${cell(clip(f.title, TITLE_LIMIT))}](${absolute(`/v1/runs/${f.run_id}/findings/${f.finding_id}`)})`,
      );
    const more = group.findings.length - shown.length;
    lines.push(
      `- ${cell(group.title)}${group.asi.length > 0 ? ` (${group.asi.join(", ")})` : ""}: ${shown.join("; ")}${more > 0 ? `; +${more} more` : ""}`,
    );
  }
  if (lines.length > 0) lines.unshift("", `Findings by category (${run.findings.length}):`, "");
  const coverage = run.evidence.security_coverage;
  if (coverage) {
    lines.push(
      "",
      "<details><summary>Security coverage: " +
        `${coverage.filter((row) => row.probed).length} of ${coverage.length} categories probed</summary>`,
      "",
      "| Category | Probes | Tripped | Inconclusive | Not probed because |",
      "|---|---|---|---|---|",
      ...coverage.map(
        (row) =>
          `| ${row.id} ${cell(row.name)} | ${row.probes} | ${row.tripped} | ${row.inconclusive} | ${inertCell(clip(row.not_probed ?? "", 90))} |`,
      ),
      "",
      "</details>",
    );
  }
  return lines;
}

/** `1,047 → 1,210 (+15.6%)`; `unknown` for a figure that is not known. */
function figure(
  f: { base: number | null; head: number | null; change: number | null },
  show: (n: number) => string,
): string {
  const side = (n: number | null) => (n === null ? "unknown" : show(n));
  const change = f.change === null ? "" : ` (${f.change >= 0 ? "+" : ""}${Math.round(f.change * 1000) / 10}%)`;
  return `${side(f.base)} → ${side(f.head)}${change}`;
}

const CASES_SHOWN = 20;
const CLASS_LABEL: Record<CaseChange["class"], string> = {
  regressed: "⬇️ regressed",
  inconclusive: "❔ inconclusive",
  improved: "⬆️ improved",
  new: "🆕 new",
  removed: "➖ removed",
};

/**
 * What the change did, shown first: the baseline it was compared with, the cases that regressed,
 * then improved, new and removed ones, with their statistics and both sides' evidence; and what
 * the head changes in the base branch's policy, with who approved it.
 */
function changeSection(view: DecisionReport, absolute: (ref: string) => string): string[] {
  const { decision } = view;
  const lines: string[] = [];
  const { baseline, changes } = decision;
  if (baseline && !baseline.found) {
    lines.push(`**No baseline**: ${cell(baseline.reason ?? "")}. Nothing was compared.`, "");
  }
  if (baseline?.found) {
    const counts = changes?.counts;
    lines.push(
      `#### Compared with the base branch: baseline \`${baseline.commit_sha!.slice(0, 7)}\` ([decision](${absolute(`/v1/release-decisions/${baseline.decision_id}`)})), ` +
        `${plural(baseline.age_commits!, "commit")} and ${baseline.age_days} days before the merge base \`${baseline.merge_base_sha.slice(0, 7)}\``,
      "",
    );
    if (baseline.warning) lines.push(`⚠️ ${cell(baseline.warning)}`, "");
    if (counts) {
      lines.push(
        `**${counts.regressed} regressed**, ${counts.improved} improved, ${counts.inconclusive} inconclusive, ${counts.new} new, ${counts.removed} removed, ${counts.unchanged} unchanged.`,
        "",
      );
      const shown = changes.cases.slice(0, CASES_SHOWN);
      if (shown.length > 0) {
        lines.push("| Case | Change | Base | Head | p | Evidence |", "|---|---|---|---|---|---|");
        for (const c of shown) {
          const flaky = c.flaky ? ` (flaky${c.flaky.quarantined ? ", quarantined" : ""})` : "";
          const side = (s: CaseChange["base"]) =>
            s ? `${s.passes}/${s.runs}${s.mean_score !== null ? ` (score ${s.mean_score})` : ""}` : "—";
          const p = [c.rate_p, c.score_p].filter((x) => x !== null).join(" / ") || "—";
          const settle =
            c.class === "inconclusive" && c.more_repeats_to_settle !== null
              ? `; ${c.more_repeats_to_settle} more repeats settle it`
              : "";
          const refs = [
            ...c.head_refs.slice(0, 1).map((ref) => `[head](${absolute(ref)})`),
            ...c.base_refs.slice(0, 1).map((ref) => `[base](${absolute(ref)})`),
          ].join(" · ");
          lines.push(
            `| \`${cell(c.case_id)}\` | ${CLASS_LABEL[c.class]}${flaky}${settle} | ${side(c.base)} | ${side(c.head)} | ${p} | ${refs} |`,
          );
        }
        const more = changes.cases.length - shown.length + changes.cases_left_out;
        if (more > 0) lines.push("", `${plural(more, "more changed case")}: ${absolute(decision.links.self)}`);
        lines.push("");
      }
      if (changes.usage.length > 0) {
        lines.push("| Run (head vs base) | Tokens | Cost | p95 latency |", "|---|---|---|---|");
        for (const u of changes.usage) {
          const runs = `[head](${absolute(`/v1/runs/${u.run_id}/evidence`)}) vs [base](${absolute(`/v1/runs/${u.base_run_id}/evidence`)})`;
          lines.push(
            `| ${runs} | ${figure(u.tokens, (n) => n.toLocaleString("en-US"))} | ${figure(u.cost_usd, (n) => `$${n}`)} | ${figure(u.latency_ms_p95, (n) => `${n} ms`)} |`,
          );
        }
        lines.push("");
      }
      if (changes.flaky.length > 0) {
        const settings = decision.change_settings?.flaky;
        const mode =
          settings?.mode === "quarantine"
            ? "quarantined: their failures do not block"
            : "reported: they block as usual";
        lines.push(
          `**Flaky on the base branch** (flip rate above ${settings?.threshold ?? "the threshold"}; ${mode}):`,
          "",
        );
        for (const f of changes.flaky.slice(0, CASES_SHOWN)) {
          lines.push(
            `- \`${cell(f.case_id)}\`: flipped ${f.flips} of ${f.pairs} times, \`${f.history}\` (oldest first)${f.quarantined ? ", quarantined" : ""}`,
          );
        }
        if (changes.flaky.length > CASES_SHOWN) lines.push(`- and ${changes.flaky.length - CASES_SHOWN} more`);
        lines.push("");
      }
    }
  }
  const policy = decision.reasons.find((r) => r.run_id === null && r.gate_id === POLICY_GATE);
  if (policy) {
    const state =
      policy.status === "waived"
        ? "approved"
        : policy.blocking
          ? "**blocking until a writer other than the author approves them** (the *Approve policy* button)"
          : "reported only";
    lines.push(`#### Policy changes to the base branch's \`.assure/\`: ${state}`, "");
    for (const change of decision.policy_changes.slice(0, CASES_SHOWN)) {
      lines.push(`- ${change.kind} \`${cell(change.where)}\`: ${cell(change.message)}`);
    }
    if (decision.policy_changes.length > CASES_SHOWN) {
      lines.push(`- and ${decision.policy_changes.length - CASES_SHOWN} more`);
    }
    for (const approval of view.policy?.approvals ?? []) {
      lines.push(
        `- Approved by ${approval.created_by.github_login ? `@${approval.created_by.github_login}` : `key ${approval.created_by.key_id}`} at ${approval.created_at}: ${cell(approval.reason)}`,
      );
    }
    for (const press of view.policy?.refused ?? []) {
      lines.push(
        `- @${press.login} pressed *Approve policy* at ${press.pressed_at}, but ${cell(press.refusal)}: refused.`,
      );
    }
    lines.push("");
  }
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
  const subject =
    "repository" in decision.subject
      ? `\`${decision.subject.repository}@${decision.subject.commit_sha.slice(0, 7)}\``
      : `${decision.subject.run_ids.length} runs`;
  const icon = { ALLOWED: "✅", BLOCKED: "❌", PENDING: "⏳" }[decision.status];
  const head = [
    `### ${icon} Release ${decision.status.toLowerCase()}`,
    "",
    `Decision [\`${decision.decision_id}\`](${absolute(decision.links.self)}) for ${subject}, attempt ${decision.attempt}: ` +
      `${plural(decision.planned.length, "planned run")}.`,
    "",
    ...(decision.planned_by === "client" && "repository" in decision.subject
      ? [
          "_Planned by the client that made it (its plan and base were not read from GitHub by the assure GitHub App): no check run of the App shows it._",
          "",
        ]
      : []),
    ...(view.approval
      ? [
          `A pull request from a fork: its runs were approved by @${view.approval.login} (${view.approval.permission} access) at ${view.approval.pressed_at}.`,
          "",
        ]
      : []),
  ];
  // What has no run to show it: runs not started (or waiting), a wait given up, nothing planned.
  const pending = decision.reasons
    .filter((r) => (r.run_id === null && r.gate_id !== POLICY_GATE) || r.status === "pending")
    .map((r) => `- ${cell(r.reason)}`);
  const body = [
    ...changeSection(view, absolute),
    ...(pending.length > 0 ? [...pending, ""] : []),
    ...view.runs.flatMap((run) => runSection(run, absolute, decision.reasons)),
  ];
  const leftOut =
    annotationsLeftOut > 0
      ? [`${plural(annotationsLeftOut, "more annotation")} not shown: read them in the evidence.`]
      : [];
  const footer = (cut: number) => [
    ...leftOut,
    ...(cut > 0 ? [`_${plural(cut, "line")} cut to fit; the whole decision: ${absolute(decision.links.self)}_`] : []),
  ];
  let kept = body;
  const text = (lines: string[], cut: number) => [...head, ...lines, ...footer(cut)].join("\n");
  while (text(kept, body.length - kept.length).length > limit && kept.length > 0) {
    kept = kept.slice(0, Math.floor(kept.length * 0.9));
  }
  return text(kept, body.length - kept.length);
}
