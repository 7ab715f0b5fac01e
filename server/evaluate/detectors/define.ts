import type { Severity } from "../../contract/index.js";

/**
 * A built-in detector: scans every text the agent produced (replies and raw tool arguments) in
 * every conversation of a run. Adding one is a file that defines one, and a line in `index.ts`.
 */
export interface Detector {
  /** Its evaluations are `detector.<name>`, and so are its findings' `probe_id`. */
  name: string;
  title: string;
  severity: Severity;
  find(text: string): boolean;
}

export const defineDetector = (detector: Detector): Detector => detector;
