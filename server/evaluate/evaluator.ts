import type { Evaluation, EvaluationKind, ProbeCategory, Severity, TestSpecDocument } from "../contract/index.js";
import type { HeldConversation } from "./conversation-facts.js";
import type { Judge } from "./judges/llm-judge.js";

/** An evaluation before it is stored. */
export type EvaluationDraft = Omit<Evaluation, "evaluation_id" | "run_id" | "created_at" | "scope" | "kind"> & {
  scope: "turn" | "conversation" | "run";
};

/** A finding before it is stored: what tripped, how bad it is, and the trace entries that show it. */
export interface FindingDraft {
  probe_id: string;
  category: ProbeCategory;
  owasp: string;
  severity: Severity;
  title: string;
  description: string;
  spec_path: string | null;
  evidence_refs: string[];
}

/** At most this many refs per finding; the description says how many there were. */
export const MAX_FINDING_REFS = 50;

export interface EvaluationInput {
  spec: TestSpecDocument;
  /** The completed conversations of the run, in a stable order. */
  conversations: readonly HeldConversation[];
  /** The LLM judge, when one is configured. */
  judge: Judge | undefined;
  signal: AbortSignal;
}

export interface EvaluatorOutput {
  evaluations: EvaluationDraft[];
  findings: FindingDraft[];
}

/**
 * One family of evaluations (expectations, judged metrics, security probes, detectors). Adding a
 * family is a file that implements this, and a line in `evaluators/index.ts`.
 */
export interface Evaluator {
  /** The kind of every evaluation it makes: gates select evaluations by it. */
  kind: EvaluationKind;
  evaluate(input: EvaluationInput): EvaluatorOutput | Promise<EvaluatorOutput>;
}

const byScenario = new WeakMap<readonly HeldConversation[], Map<string, HeldConversation[]>>();

/** The conversations held for a scenario or probe of the spec (indexed once per run: a suite may hold thousands). */
export function conversationsOf(input: EvaluationInput, kind: "scenario" | "probe", id: string): HeldConversation[] {
  let index = byScenario.get(input.conversations);
  if (!index) {
    index = new Map();
    for (const held of input.conversations) {
      const key = `${held.conversation.kind}\0${held.conversation.scenario_id}`;
      const list = index.get(key);
      if (list) list.push(held);
      else index.set(key, [held]);
    }
    byScenario.set(input.conversations, index);
  }
  return index.get(`${kind}\0${id}`) ?? [];
}
