import type { z } from "zod";
import type { TestSpecDocument } from "../document-shape.js";
import type { EvaluationKindName, SpecCase } from "../evaluation-kinds/index.js";
import type { Severity } from "../severity.js";

/** A gate's fields in `require` as written: each optional. */
type Written<Fields extends z.ZodRawShape> = z.output<z.ZodObject<Fields>>;

/** The `require` of a gate that names a requirement: its naming field is there. */
export type Named<Fields extends z.ZodRawShape, Name extends keyof Written<Fields>> = Written<Fields> & {
  [K in Name]-?: NonNullable<Written<Fields>[K]>;
};

/** What a requirement decided of a gate from one run's evidence. */
export interface RequirementDecision {
  status: "passed" | "failed" | "inconclusive";
  reason: string;
  evidence_refs: string[];
}

/** An evaluation as a gate weighs it. */
export interface WeighedEvaluation {
  evaluation_id: string;
  metric_id: string;
  status: "passed" | "failed" | "inconclusive" | "errored";
}

/** A finding as a gate weighs it. */
export interface WeighedFinding {
  finding_id: string;
  severity: Severity;
}

/** One run's evidence, as a requirement decides a gate from it. */
export interface RunEvidence {
  spec: TestSpecDocument;
  /** The run's evaluations of one kind, in the order they were made. */
  evaluations(kind: EvaluationKindName): readonly WeighedEvaluation[];
  findings: readonly WeighedFinding[];
  /** Whether an LLM judge was configured to score the spec's metrics. */
  judgeConfigured: boolean;
  /** The API paths that cite them. */
  cite: {
    evaluations(list: readonly WeighedEvaluation[]): string[];
    findings(list: readonly WeighedFinding[]): string[];
  };
}

/** A problem with a gate, at a path under its `require`. */
export type RequireProblem = (path: (string | number)[], message: string) => void;

/** A field of a gate's `require`, and what the policy says of it: a path under `require` and a message. */
export interface RequireChange {
  field: string;
  message: string;
}

/**
 * One requirement a gate can name in its `require` (at most one per gate; `no_regression` goes
 * beside any): its fields in the spec format and what it means. Adding one is a file that defines
 * one, and a line in `index.ts`; the spec format, its JSON Schema, validation, the run's gates, what
 * a gate's `no_regression` covers and the policy changes that loosen it follow from it.
 *
 * A requirement's type is written out, not inferred (`GateRequirement<typeof fields, Named<typeof
 * fields, "metric">>`): the document's type is made of its fields', and its methods read the document.
 */
export interface GateRequirement<
  Fields extends z.ZodRawShape = z.ZodRawShape,
  Require extends Readonly<Record<string, unknown>> = Readonly<Record<string, unknown>>,
> {
  /** The field of `require` that names it; its other fields go with it. */
  name: string;
  /** Its fields in `require`, each optional, the naming one first. */
  fields: Fields;
  /** How the spec format's error names it when a gate names none or several (`metric (with min_pass_rate)`). */
  synopsis?: string;
  /** Checks of a gate that names it, beyond its fields' own. */
  refine?(require: Require, problem: RequireProblem): void;
  /** Checks against the rest of its spec: what it names must be defined there. */
  checkReferences?(require: Require, spec: TestSpecDocument, problem: RequireProblem): void;
  /** Decides the gate from one run's evidence; what cannot be decided is inconclusive, never passed. */
  decide(require: Require, run: RunEvidence): RequirementDecision;
  /** The cases the gate's `no_regression` covers beside it. */
  covers(require: Require): (c: SpecCase) => boolean;
  /** What the gate requires, as a policy change names it (`metric task_completion`). */
  describe(require: Require): string;
  /** How a head's gate is looser than its base's, both naming this requirement. */
  loosened?(base: Require, head: Require, gateId: string): Iterable<RequireChange>;
  /** What the head changes elsewhere in the spec that changes what the base's gate counts. */
  recounted?(require: Require, gateId: string, base: TestSpecDocument, head: TestSpecDocument): Iterable<RequireChange>;
}
