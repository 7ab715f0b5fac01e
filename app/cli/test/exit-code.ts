import { toCheckState } from "../../checks/conclusion.js";
import type { ReleaseDecision } from "../../../server/contract/index.js";
import { EXIT } from "../exit-codes.js";
import type { FailOn } from "./test-options.js";

/** What a decided release exits with: the App's check-run conclusion, as `--fail-on` asks. */
export function exitCodeOf(decision: ReleaseDecision, failOn: FailOn): number {
  const { conclusion } = toCheckState({ kind: "decision", status: decision.status, reasons: decision.reasons });
  if (failOn === "never" || conclusion === "success") return EXIT.allowed;
  if (conclusion === "failure") return EXIT.blocked;
  return failOn === "failed" ? EXIT.allowed : EXIT.error;
}
