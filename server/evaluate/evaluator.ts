import type {
  Evaluation,
  EvaluationKind,
  Pricing,
  ProbeCategory,
  Severity,
  TestSpecDocument,
} from "../contract/index.js";
import type { AgentUsage } from "../usage/agent-usage.js";
import type { ConversationSource } from "./conversation-source.js";
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
  owasp_llm?: string | undefined;
  owasp_asi?: string | undefined;
  atlas?: string | undefined;
  detection?: "deterministic" | "judged" | undefined;
  attack?: { family: string; strategies: string[]; decoded: string; sent: string } | undefined;
}

/** At most this many refs per finding; the description says how many there were. */
export const MAX_FINDING_REFS = 50;

export interface EvaluationInput {
  spec: TestSpecDocument;
  /** The completed conversations of the run, in the plan's order: `of` gives the ones that count, `all` every try. */
  conversations: ConversationSource;
  /** The LLM judge, when one is configured. */
  judge: Judge | undefined;
  signal: AbortSignal;
  /** What the agent's answers reported over the whole run (every try), for its budget. */
  usage?: AgentUsage | undefined;
  /** The prices the run started with. */
  pricing?: Pricing | undefined;
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
