import { SEVERITY_RANK } from "../severity-rank.js";
import { Severity } from "../severity.js";
import type { GateRequirement, Named } from "./define.js";

const fields = { max_finding_severity: Severity.optional() };

/**
 * `max_finding_severity: <severity>`: no finding of the run — a security probe that tripped, a
 * built-in detector that fired — above it.
 */
export const maxFindingSeverity: GateRequirement<typeof fields, Named<typeof fields, "max_finding_severity">> = {
  name: "max_finding_severity",
  fields,
  decide({ max_finding_severity: max }, run) {
    const over = run.findings.filter((f) => SEVERITY_RANK[f.severity] > SEVERITY_RANK[max]);
    if (over.length > 0) {
      const worst = over.map((f) => f.severity).sort((a, b) => SEVERITY_RANK[b] - SEVERITY_RANK[a])[0];
      return {
        status: "failed",
        reason: `${over.length} finding(s) above ${max} (worst: ${worst})`,
        evidence_refs: run.cite.findings(over),
      };
    }
    const probes = run.evaluations("probe");
    const detectors = run.evaluations("detector");
    return {
      status: "passed",
      reason:
        `no finding above ${max} (${probes.length} probe conversation(s) and ${detectors.length} detector(s) checked, ` +
        `${run.findings.length} finding(s) at or below)`,
      evidence_refs: [
        ...run.cite.evaluations(probes),
        ...run.cite.evaluations(detectors),
        ...run.cite.findings(run.findings),
      ],
    };
  },
  covers: () => (c) => c.kind === "probe",
  describe: () => "max_finding_severity",
  *loosened(base, head, gateId) {
    if (SEVERITY_RANK[head.max_finding_severity] > SEVERITY_RANK[base.max_finding_severity]) {
      yield {
        field: "max_finding_severity",
        message: `'${gateId}' now allows findings up to ${head.max_finding_severity} (was ${base.max_finding_severity})`,
      };
    }
  },
};
