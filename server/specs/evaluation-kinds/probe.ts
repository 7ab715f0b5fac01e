import { limitsOf } from "../limits.js";
import { defineEvaluationKind } from "./define.js";

/** A security probe (`probe.<probe id>`): one evaluation per conversation, a case per probe. */
export const probe = defineEvaluationKind({
  name: "probe",
  prefix: "probe.",
  cases: {
    *inSpec(spec) {
      for (const [p, probe] of (spec.security ?? []).entries()) {
        const { repeat: _repeat, description: _description, ...checked } = probe;
        yield {
          subject: probe.id,
          locator: LOCATOR,
          spec_path: `security[${p}]`,
          check: {
            probe: { ...probe, repeat: undefined },
            tools: spec.tools ?? [],
            max_steps: limitsOf(spec).max_steps,
          },
          // Without its repeats and description.
          definition: checked,
        };
      }
    },
    locatorOf: () => LOCATOR,
  },
});

const LOCATOR = "probe";
