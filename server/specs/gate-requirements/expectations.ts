import { z } from "zod";
import type { GateRequirement, Named } from "./define.js";

const fields = { expectations: z.literal("all").optional() };

/** `expectations: all`: every deterministic expectation of every scenario held, in every conversation. */
export const expectations: GateRequirement<typeof fields, Named<typeof fields, "expectations">> = {
  name: "expectations",
  fields,
  decide(_require, run) {
    const checks = run.evaluations("expectation");
    if (checks.length === 0) {
      const written = (run.spec.scenarios ?? []).some(
        (s) => (s.expect ?? []).length > 0 || s.turns.some((t) => (t.expect ?? []).length > 0),
      );
      return {
        status: "inconclusive",
        reason: written
          ? "no expectation was checked: no scenario conversation was evaluated"
          : "no expectation was checked: the spec's scenarios have none (a gate on expectations needs at least one)",
        evidence_refs: [],
      };
    }
    const failed = checks.filter((e) => e.status !== "passed" && e.status !== "inconclusive");
    if (failed.length > 0) {
      return {
        status: "failed",
        reason: `${failed.length} of ${checks.length} expectation check(s) failed`,
        evidence_refs: run.cite.evaluations(failed),
      };
    }
    const undecided = checks.filter((e) => e.status === "inconclusive");
    if (undecided.length > 0) {
      return {
        status: "inconclusive",
        reason: `${undecided.length} of ${checks.length} expectation check(s) could not be judged (the agent runs its own tools and reported no tool call); the others passed`,
        evidence_refs: run.cite.evaluations(undecided),
      };
    }
    return {
      status: "passed",
      reason: `all ${checks.length} expectation check(s) passed`,
      evidence_refs: run.cite.evaluations(checks),
    };
  },
  covers: () => (c) => c.kind === "expectation",
  describe: () => "expectations",
};
