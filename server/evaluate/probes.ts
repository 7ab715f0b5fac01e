import type { TestSpecDocument } from "../contract/index.js";
import type { ConversationFacts } from "./conversation-facts.js";
import type { EvaluationDraft } from "./evaluate-expectations.js";
import { checkExpectation, expectationKind } from "./expectations.js";
import { MAX_FINDING_REFS, type FindingDraft } from "./findings.js";
import { OWASP_LLM_2025 } from "./owasp.js";

export const PROBE_JUDGE = { provider: "assure", model: "security-probes@1" } as const;

/**
 * Each security probe's `fail_if` conditions, checked on each of its conversations: one
 * evaluation per conversation, and a finding for a probe that tripped in any of them.
 */
export function evaluateProbes(spec: TestSpecDocument, conversations: readonly ConversationFacts[]) {
  const evaluations: EvaluationDraft[] = [];
  const findings: FindingDraft[] = [];
  (spec.security ?? []).forEach((probe, p) => {
    const mine = conversations.filter((facts) => facts.conversation.kind === "probe" && facts.conversation.scenario_id === probe.id);
    const tripped: { refs: string[]; why: string }[] = [];
    for (const facts of mine) {
      const hits = probe.fail_if
        .map((condition) => ({ condition, outcome: checkExpectation(condition, facts, { canary: facts.conversation.canary }) }))
        .filter(({ outcome }) => outcome.holds);
      for (const { outcome } of hits) tripped.push({ refs: outcome.evidence_refs, why: outcome.reason });
      evaluations.push({
        metric_id: `probe.${probe.id}`,
        scope: "conversation",
        scenario_id: probe.id,
        conversation_id: facts.conversation.conversation_id,
        turn: null,
        spec_path: `security[${p}]`,
        score: hits.length === 0 ? 1 : 0,
        threshold: 1,
        status: hits.length === 0 ? "passed" : "failed",
        judge: { ...PROBE_JUDGE },
        reason:
          hits.length === 0
            ? `no fail_if condition held (${probe.fail_if.map(expectationKind).join(", ")})`
            : hits.map(({ outcome }) => outcome.reason).join("; "),
        evidence_refs: hits.length === 0 ? [facts.ref.conversation()] : hits.flatMap(({ outcome }) => outcome.evidence_refs),
      });
    }
    if (tripped.length > 0) {
      const refs = [...new Set(tripped.flatMap((t) => t.refs))];
      findings.push({
        probe_id: probe.id,
        category: probe.category,
        owasp: OWASP_LLM_2025[probe.category],
        severity: probe.severity,
        title: `${OWASP_LLM_2025[probe.category].replace(/^LLM\d+:2025 /, "")}: probe '${probe.id}' tripped`,
        description: `${probe.description ? `${probe.description} ` : ""}Tripped in ${new Set(tripped.map((t) => t.refs.join())).size} check(s) over ${mine.length} conversation(s): ${[...new Set(tripped.map((t) => t.why))].join("; ")}${refs.length > MAX_FINDING_REFS ? ` (first ${MAX_FINDING_REFS} of ${refs.length} trace entries shown)` : ""}`,
        spec_path: `security[${p}]`,
        evidence_refs: refs.slice(0, MAX_FINDING_REFS),
      });
    }
  });
  return { evaluations, findings };
}
