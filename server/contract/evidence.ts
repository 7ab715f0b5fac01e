import { z } from "zod";
import { PageQuery, TokenUsage, extensible, listOf } from "./common.js";
import { RunExecutor, RunFailure, RunStatus, Verdict } from "./runs.js";
import { ProbeCategory, Severity } from "../specs/document.js";
import { EVALUATION_KIND_NAMES } from "../specs/evaluation-kinds/index.js";

const EvidenceRefs = z.array(z.string()).describe("API paths, each readable with evidence:read");

export const GateStatus = z.enum(["passed", "failed", "inconclusive", "waived"]);
export const GateOutcome = z
  .object({
    id: z.string().describe("Short code from the spec, e.g. SEC"),
    gate_id: z
      .string()
      .describe("Short code from the spec, e.g. SEC: the gate as decisions' reasons and waivers name it"),
    title: z.string().nullable(),
    status: GateStatus,
    reason: z.string().describe("Why the gate decided so, in one sentence"),
    evidence_refs: EvidenceRefs,
  })
  .meta({ id: "Gate" });
export type GateOutcome = z.infer<typeof GateOutcome>;

export const EvaluationStatus = z.enum(["passed", "failed", "inconclusive", "errored"]);
export type EvaluationStatus = z.infer<typeof EvaluationStatus>;

/**
 * What made an evaluation: a deterministic expectation of a scenario, a metric of the spec scored
 * by the LLM judge, a security probe, a built-in detector that scans every output, or the run's
 * budget — each a file in `specs/evaluation-kinds/`.
 */
export const EvaluationKind = z.enum(EVALUATION_KIND_NAMES);
export type EvaluationKind = z.infer<typeof EvaluationKind>;
export const Evaluation = z
  .object({
    evaluation_id: z.string(),
    run_id: z.string(),
    kind: extensible(EvaluationKind),
    metric_id: z
      .string()
      .describe("expect.<expectation kind>, a spec metric's id, probe.<probe id> or detector.<name>"),
    scope: z.string().describe("turn, conversation or run"),
    score: z.number(),
    threshold: z.number(),
    status: EvaluationStatus,
    judge: z
      .object({
        provider: z.string(),
        model: z.string(),
        temperature: z.number().optional(),
        seed: z.number().int().optional(),
        prompt_version: z.string().optional(),
        usage: TokenUsage.nullable()
          .optional()
          .describe("An LLM judge's tokens for this evaluation, as its answer reported them (null: none reported)"),
      })
      .describe("Who judged, and how: provenance, not internals"),
    evidence_refs: EvidenceRefs,
    reason: z.string(),
    scenario_id: z.string().nullable(),
    conversation_id: z.string().nullable(),
    turn: z.number().int().nullable(),
    spec_path: z
      .string()
      .nullable()
      .describe("Where the check is written in the spec, e.g. scenarios[0].turns[1].expect[0]"),
    created_at: z.string(),
  })
  .meta({ id: "Evaluation" });
export type Evaluation = z.infer<typeof Evaluation>;

export const EvaluationList = listOf(Evaluation).meta({ id: "EvaluationList" });

export const EvaluationQuery = PageQuery.extend({
  status: EvaluationStatus.optional(),
  kind: EvaluationKind.optional(),
  metric_id: z.string().min(1).max(200).optional(),
});

const StatusCounts = z.object({
  total: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  inconclusive: z.number().int(),
  errored: z.number().int(),
});

export const Finding = z
  .object({
    finding_id: z.string(),
    run_id: z.string(),
    probe_id: z.string().describe("The spec's security probe id, or detector.<name> for a built-in leak detector"),
    category: extensible(ProbeCategory),
    owasp: z.string().describe("OWASP Top 10 for LLM Applications (2025) entry, e.g. LLM01:2025 Prompt Injection"),
    severity: Severity,
    title: z.string(),
    description: z.string(),
    status: z.enum(["open"]),
    spec_path: z.string().nullable(),
    evidence_refs: EvidenceRefs.describe("The exact trace entries, e.g. the tool.called of the forbidden call"),
    created_at: z.string(),
    owasp_llm: z.string().optional().describe("Its OWASP Top 10 for LLM Applications 2025 id, LLM01 to LLM10"),
    owasp_asi: z
      .string()
      .optional()
      .describe("Its OWASP Top 10 for Agentic Applications 2026 id, ASI01 to ASI10, where one applies"),
    atlas: z
      .string()
      .optional()
      .describe("Its MITRE ATLAS technique, e.g. AML.T0051.001, for a security library probe"),
    detection: extensible(z.enum(["deterministic", "judged"]))
      .optional()
      .describe("How it was found: from the trace alone (deterministic), or by a judge"),
    attack: z
      .object({
        family: z.string().describe("The security library family that made the probe"),
        strategies: z.array(z.string()).describe("Applied to the attack in this order"),
        decoded: z.string().describe("The attack in plain words"),
        sent: z.string().describe("The attack as sent"),
      })
      .optional()
      .describe("The attack of a security library probe"),
  })
  .meta({ id: "Finding" });
export type Finding = z.infer<typeof Finding>;

export const FindingList = listOf(Finding).meta({ id: "FindingList" });

export const FindingQuery = PageQuery.extend({
  severity: Severity.optional(),
  status: z.enum(["open"]).optional(),
});

/** A run's usage by model, its cost at the prices it started with, and the answers' latency. */
export const UsageDetail = z
  .object({
    by_model: z
      .record(
        z.string(),
        z.object({
          answers: z.number().int(),
          answers_without_usage: z.number().int(),
          answers_without_split: z
            .number()
            .int()
            .describe("Answers that did not report input and output tokens apart: their cost is unknown"),
          input_tokens: z.number().int(),
          output_tokens: z.number().int(),
          total_tokens: z.number().int(),
        }),
      )
      .describe('By the model each answer named ("": none)'),
    cost_usd: z
      .number()
      .nullable()
      .describe(
        "At the prices the run started with (its environment's endpoint.pricing); null when unknown, never zero",
      ),
    cost_unknown: z.string().nullable().describe("Why the cost is unknown"),
    latency_ms_p95: z.number().nullable().describe("The 95th percentile of the answers' latency (nearest rank)"),
    judge: z
      .object({
        answers: z.number().int(),
        answers_without_usage: z.number().int(),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
      })
      .describe("The LLM judge's tokens over the run's evaluations, apart from the agent's (not in budgets)"),
  })
  .meta({ id: "UsageDetail" });

/** A category of the OWASP LLM 2025 or Agentic 2026 list, as the run probed it. */
export const SecurityCoverageRow = z
  .object({
    taxonomy: extensible(z.enum(["owasp_llm", "owasp_asi"])),
    id: z.string().describe("LLM01 to LLM10, or ASI01 to ASI10"),
    name: z.string(),
    probed: z.boolean().describe("At least one of its probes ran and was decided (not all inconclusive)"),
    probes: z.number().int().describe("The spec's probes named in it"),
    tripped: z.number().int().describe("Its probes that raised a finding"),
    inconclusive: z.number().int().describe("Its probes no conversation decided"),
    not_probed: z
      .string()
      .nullable()
      .describe(
        "Why it was not probed (not testable from outside, no suitable tool, only inconclusive probes); null when it was",
      ),
  })
  .meta({ id: "SecurityCoverageRow" });
export type SecurityCoverageRow = z.infer<typeof SecurityCoverageRow>;

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
    executor: RunExecutor.describe(
      "Where its conversations were held: by the service, or outside it (local) and uploaded; either way judged by the service",
    ),
    uploaded_by: z.string().nullable().describe("For a run executed outside the service: the API key that uploaded it"),
    status: RunStatus,
    verdict: Verdict,
    failure: RunFailure.nullable(),
    decided_at: z.string().nullable().describe("When the verdict was reached; null while PENDING"),
    gates: z.array(GateOutcome),
    evaluations: StatusCounts.describe("Counts; list them at links.evaluations"),
    usage: z
      .object({
        answers: z.number().int().describe("Answers the agent gave"),
        answers_without_usage: z
          .number()
          .int()
          .describe("Answers that reported no tokens: while there are any, the totals are a lower bound"),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
      })
      .nullable()
      .describe(
        "The agent's tokens over the run, as its answers reported them (the judge's are not counted); null until the run ends",
      ),
    usage_detail: UsageDetail.nullable().describe(
      "The usage by model, what it cost and how fast the agent answered; null until the run ends",
    ),
    findings: z.array(Finding).describe("Every finding of the run, most severe first"),
    security_coverage: z
      .array(SecurityCoverageRow)
      .nullable()
      .optional()
      .describe(
        "Each OWASP LLM 2025 category, and each Agentic 2026 one the probes name: probed or not (and why not), its probes, how many tripped and how many were inconclusive; null for a spec without security probes",
      ),
    links: z.object({
      run: z.string(),
      self: z.string(),
      conversations: z.string(),
      trace: z.string(),
      evaluations: z.string(),
      findings: z.string(),
    }),
  })
  .meta({ id: "Evidence" });
export type Evidence = z.infer<typeof Evidence>;
