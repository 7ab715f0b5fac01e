import { z } from "zod";
import { RunFailure, RunStatus, Verdict } from "./runs.js";
import { ProbeCategory, Severity } from "./test-spec-document.js";

const EvidenceRefs = z.array(z.string()).describe("API paths, each readable with evidence:read");

export const GateStatus = z.enum(["passed", "failed", "inconclusive", "waived"]);
export const GateOutcome = z
  .object({
    id: z.string().describe("Short code from the spec, e.g. SEC"),
    title: z.string().nullable(),
    status: GateStatus,
    evidence_refs: EvidenceRefs,
  })
  .meta({ id: "Gate" });

export const EvaluationStatus = z.enum(["passed", "failed", "inconclusive", "errored"]);
export const Evaluation = z
  .object({
    evaluation_id: z.string(),
    metric_id: z.string(),
    scope: z.string().describe("conversation, turn or run"),
    score: z.number(),
    threshold: z.number(),
    status: EvaluationStatus,
    judge: z.object({ provider: z.string(), model: z.string() }),
    evidence_refs: EvidenceRefs,
  })
  .meta({ id: "Evaluation" });

export const Finding = z
  .object({
    finding_id: z.string(),
    probe_id: z.string(),
    category: ProbeCategory,
    owasp: z.string(),
    severity: Severity,
    title: z.string(),
    status: z.string(),
    evidence_refs: EvidenceRefs,
  })
  .meta({ id: "Finding" });

export const Evidence = z
  .object({
    evidence_version: z.literal("1"),
    run_id: z.string(),
    project_id: z.string(),
    test_spec_id: z.string(),
    spec_version: z.string(),
    agent_id: z.string(),
    agent_version: z.string(),
    environment: z.string().describe("Name of the environment the run used"),
    environment_id: z.string(),
    status: RunStatus,
    verdict: Verdict,
    failure: RunFailure.nullable(),
    gates: z.array(GateOutcome),
    evaluations: z.array(Evaluation),
    findings: z.array(Finding),
    links: z.object({ run: z.string(), self: z.string() }),
  })
  .meta({ id: "Evidence" });
export type Evidence = z.infer<typeof Evidence>;

