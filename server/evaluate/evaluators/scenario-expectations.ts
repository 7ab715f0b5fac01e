import { scenarioCases } from "../../specs/scenario-cases.js";
import { EVALUATION_PREFIXES, type Expectation } from "../../contract/index.js";
import { checkExpectation } from "../../specs/expectations/index.js";
import type { ConversationFacts } from "../../specs/facts.js";
import { refsOf, type HeldConversation } from "../conversation-facts.js";
import { type EvaluationDraft, type Evaluator } from "../evaluator.js";

export const EXPECTATIONS_JUDGE = { provider: "assure", model: "deterministic-expectations@1" } as const;

function evaluateOne(
  expectation: Expectation,
  held: HeldConversation,
  facts: ConversationFacts,
  specPath: string,
): EvaluationDraft {
  const outcome = checkExpectation(expectation, facts);
  return {
    metric_id: `${EVALUATION_PREFIXES.expectation}${outcome.kind}`,
    scope: facts.turn === null ? "conversation" : "turn",
    scenario_id: held.conversation.scenario_id,
    conversation_id: held.conversation.conversation_id,
    turn: facts.turn,
    spec_path: specPath,
    score: outcome.score ?? (outcome.holds ? 1 : 0),
    threshold: 1,
    status: outcome.inconclusive ? "inconclusive" : outcome.holds ? "passed" : "failed",
    judge: { ...EXPECTATIONS_JUDGE },
    reason: outcome.reason,
    evidence_refs: refsOf(held, facts, outcome.sequences),
  };
}

/**
 * Every deterministic expectation of every scenario, checked on every completed conversation
 * (one per repeat): one evaluation each, citing the trace entries it looked at.
 */
export const scenarioExpectations: Evaluator = {
  kind: "expectation",
  async evaluate(input) {
    const evaluations: EvaluationDraft[] = [];
    for (const { index: s, id, scenario } of scenarioCases(input.spec)) {
      for (const held of await input.conversations.of("scenario", id)) {
        scenario.turns.forEach((turn, t) => {
          (turn.expect ?? []).forEach((expectation, e) => {
            evaluations.push(
              evaluateOne(expectation, held, held.inTurn(t + 1), `scenarios[${s}].turns[${t}].expect[${e}]`),
            );
          });
        });
        (scenario.expect ?? []).forEach((expectation, e) => {
          evaluations.push(evaluateOne(expectation, held, held.facts, `scenarios[${s}].expect[${e}]`));
        });
      }
    }
    return { evaluations, findings: [] };
  },
};
