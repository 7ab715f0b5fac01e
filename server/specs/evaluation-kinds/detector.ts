import { defineEvaluationKind } from "./define.js";

/** A built-in detector that scans every output of a run (`detector.<name>`): run-wide, no cases. */
export const detector = defineEvaluationKind({ name: "detector", prefix: "detector." });
