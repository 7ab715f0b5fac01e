import type { Expectation, TestSpecDocument } from "../contract/index.js";
import type { ConversationFacts } from "./conversation-facts.js";
import { onlyTurn } from "./conversation-facts.js";
import { DETERMINISTIC_JUDGE, checkExpectation, expectationKind } from "./expectations.js";

export interface EvaluationDraft {
  metric_id: string;
  scope: "turn" | "conversation" | "run";
  scenario_id: string | null;
  conversation_id: string | null;
  turn: number | null;
  spec_path: string | null;
  score: number;
  threshold: number;
  status: "passed" | "failed" | "inconclusive" | "errored";
  judge: { provider: string; model: string };
  reason: string;
  evidence_refs: string[];
}

function draft(
  expectation: Expectation,
  facts: ConversationFacts,
  scope: "turn" | "conversation",
  specPath: string,
  turn: number | null,
): EvaluationDraft {
  const result = checkExpectation(expectation, facts);
  return {
    metric_id: `expect.${expectationKind(expectation)}`,
    scope,
    scenario_id: facts.conversation.scenario_id,
    conversation_id: facts.conversation.conversation_id,
    turn,
    spec_path: specPath,
    score: result.score,
    threshold: 1,
    status: result.holds ? "passed" : "failed",
    judge: { ...DETERMINISTIC_JUDGE },
    reason: result.reason,
    evidence_refs: result.evidence_refs,
  };
}

/**
 * Every deterministic expectation of every scenario, checked on every completed conversation
 * (one per repeat): one evaluation each, pointing at the trace entries it looked at.
 */
export function evaluateExpectations(spec: TestSpecDocument, conversations: readonly ConversationFacts[]): EvaluationDraft[] {
  const drafts: EvaluationDraft[] = [];
  (spec.scenarios ?? []).forEach((scenario, s) => {
    const mine = conversations.filter((facts) => facts.conversation.kind === "scenario" && facts.conversation.scenario_id === scenario.id);
    for (const facts of mine) {
      scenario.turns.forEach((turn, t) => {
        (turn.expect ?? []).forEach((expectation, e) => {
          drafts.push(draft(expectation, onlyTurn(facts, t + 1), "turn", `scenarios[${s}].turns[${t}].expect[${e}]`, t + 1));
        });
      });
      (scenario.expect ?? []).forEach((expectation, e) => {
        drafts.push(draft(expectation, facts, "conversation", `scenarios[${s}].expect[${e}]`, null));
      });
    }
  });
  return drafts;
}
