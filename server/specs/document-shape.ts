import { z } from "zod";
import { EVALUATION_PREFIXES } from "./evaluation-kinds/index.js";
import { Expectation } from "./expectations/index.js";
import { REQUIREMENT_FIELDS, checkRequire } from "./gate-requirements/index.js";
import { MAX_CONVERSATIONS_PER_SPEC } from "./vars.js";
import { Fraction, JsonObject, JsonValue, LocalId, Text, ToolName } from "./primitives.js";
import { Severity } from "./severity.js";
import { WHOLE_DOCUMENT } from "./whole-document.js";
import { LibraryEntry, SecurityCoverage } from "./security-library/entry.js";

/** The test specification format, version 1. `examples/refund-agent.yaml` is a complete example. */

export { Expectation } from "./expectations/index.js";

const GateCode = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,31}$/,
    "gate ids are short codes: a letter, then letters, digits, '_' or '-' (at most 32)",
  );

/**
 * The names the service gives the evaluations it makes itself, by their kind (a spec metric is
 * named by its own id): a spec's metric may not take one of these prefixes, nor a probe the
 * detectors' (its findings share the name).
 */
export { EVALUATION_PREFIXES } from "./evaluation-kinds/index.js";
// Typed here as plain strings: the kinds' types read this document's, so its schemas' types may not read theirs.
export const RESERVED_METRIC_PREFIXES: readonly string[] = Object.values(EVALUATION_PREFIXES);
const DETECTOR_PREFIX: string = EVALUATION_PREFIXES.detector;

/** A pattern for the document: the text starts with one of these. */
const startsWithOneOf = (prefixes: readonly string[]) =>
  `^(?:${prefixes.map((prefix) => prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`;

/** A release decision's own gate, for what a pull request removes or relaxes in the base branch's policy. */
export const POLICY_GATE_ID = "policy";
/** A release decision's own gate of a run that could not be judged (FAILED). */
export const RUN_GATE_ID = "run";
/** A release decision's own gate of a run executed outside the service where the base's policy does not let it count. */
export const EXECUTOR_GATE_ID = "executor";

/** The gate ids a release decision gives its own rows: a spec's gate may not take them (it would read as the decision's). */
export const DECISION_GATE_IDS: Record<string, string> = {
  [POLICY_GATE_ID]: "the policy changes of a pull request",
  [RUN_GATE_ID]: "a run that could not be judged",
  [EXECUTOR_GATE_ID]: "a run executed outside the service that the base's policy does not count",
};

/** The gate a run gets when its spec sets `defaults.budget`. */
export const BUDGET_GATE_ID = "budget";

export { SEVERITIES, Severity } from "./severity.js";

/** The categories a security probe can be in: the OWASP Top 10 for LLM Applications, 2025 edition. */
export const OWASP_LLM_2025 = {
  prompt_injection: "LLM01:2025 Prompt Injection",
  sensitive_information_disclosure: "LLM02:2025 Sensitive Information Disclosure",
  supply_chain: "LLM03:2025 Supply Chain",
  data_and_model_poisoning: "LLM04:2025 Data and Model Poisoning",
  improper_output_handling: "LLM05:2025 Improper Output Handling",
  excessive_agency: "LLM06:2025 Excessive Agency",
  system_prompt_leakage: "LLM07:2025 System Prompt Leakage",
  vector_and_embedding_weaknesses: "LLM08:2025 Vector and Embedding Weaknesses",
  misinformation: "LLM09:2025 Misinformation",
  unbounded_consumption: "LLM10:2025 Unbounded Consumption",
} as const;
export const ProbeCategory = z.enum(
  Object.keys(OWASP_LLM_2025) as [keyof typeof OWASP_LLM_2025, ...(keyof typeof OWASP_LLM_2025)[]],
);
export type ProbeCategory = z.infer<typeof ProbeCategory>;

const Expectations = z.array(Expectation).max(200);

export const Metric = z.strictObject({
  id: LocalId.refine((id) => !RESERVED_METRIC_PREFIXES.some((prefix) => id.startsWith(prefix)), {
    message: `metric ids may not start with ${RESERVED_METRIC_PREFIXES.join(", ")}: those prefixes are reserved for the service's own evaluations`,
  }).meta({ not: { pattern: startsWithOneOf(RESERVED_METRIC_PREFIXES) } }),
  threshold: Fraction.describe("A sample passes when its score is at least this"),
  criteria: Text.describe("What the judge checks, in plain language"),
  scope: z.enum(["conversation", "turn"]).default("conversation"),
});

/** A path segment other than `.` and `..`, without NUL, `\\` or `%` (as a pattern of the document). */
const PATH_SEGMENT = String.raw`(?:[^\x00\\%/.][^\x00\\%/]*|\.[^\x00\\%/.][^\x00\\%/]*|\.\.[^\x00\\%/]+)`;

/** Where a scenario's table is in the repository. */
export const VarsFilePath = z
  .string()
  .max(500)
  .refine(
    (path) =>
      /^\.assure\/[^\0\\%]+\.(csv|jsonl)$/.test(path) &&
      path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."),
    "a .csv or .jsonl file under .assure/, from the repository's root, without '.' or '..' segments",
  )
  .meta({ pattern: `^\\.assure/(?:${PATH_SEGMENT}/)*${PATH_SEGMENT}\\.(?:csv|jsonl)$` });

/** A column of a scenario's table, as `{{name}}` names it. */
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const Turn = z.strictObject({
  user: Text,
  expect: Expectations.optional(),
});

const RunLimits = {
  max_steps: z.number().int().min(1).max(100).describe("Agent calls allowed per user turn"),
  timeout_ms: z.number().int().min(100).max(600_000).describe("Per agent call"),
  repeat: z.number().int().min(1).max(1000).describe("Times each scenario runs"),
};

export const Scenario = z.strictObject({
  id: LocalId,
  description: z.string().max(2000).optional(),
  system: Text.optional(),
  turns: z.array(Turn).min(1).max(100),
  expect: Expectations.optional(),
  metrics: z.array(Metric).max(50).optional(),
  repeat: RunLimits.repeat.optional(),
  max_steps: RunLimits.max_steps.optional(),
  timeout_ms: RunLimits.timeout_ms.optional(),
  vars: z
    .array(
      z.record(
        z.string().regex(VAR_NAME, "column names use letters, digits, '_', '.' and '-', starting with a letter or '_'"),
        JsonValue,
      ),
    )
    .min(1)
    .max(MAX_CONVERSATIONS_PER_SPEC)
    .optional()
    .describe(
      "A table: the scenario is played once per row, {{column}} filled in its system prompt, turns, expectations and metrics, and in the tools' mocks. Its id becomes id[key], key = the row's id column or its 1-based number",
    ),
  vars_file: VarsFilePath.optional().describe(
    "The table as a CSV (a header row, then one row per case) or JSONL file in the repository; the App and the Action read it at the commit and upload it with the spec",
  ),
});
export type Scenario = z.infer<typeof Scenario>;

/** A dotted path into a tool's mocked result: `note`, `order.notes`, `items.0.name` (a number indexes a list). */
const ResultPath = z
  .string()
  .min(1)
  .max(200)
  .describe(
    "Field of the tool's mocked result: a key, or a dotted path into it (order.notes, items.0.name); a key the result has as written, dots and all, is that key",
  );

const ProbeTurn = z.strictObject({ user: Text });

/** Where a generated probe came from, and what its finding will name: written by the security library at upload. */
export const ProbeOrigin = z
  .strictObject({
    entry: z
      .string()
      .min(1)
      .max(200)
      .describe("The `security:` entry it was expanded from: preset:<name> or family:<name>"),
    family: z.string().min(1).max(100),
    strategies: z.array(z.string().min(1).max(100)).max(10).describe("Applied in this order to the attack text"),
    seed: z.number().int().min(0).max(4_294_967_295),
    owasp_llm: z.string().regex(/^LLM(0[1-9]|10)$/, "LLM01 to LLM10"),
    owasp_asi: z
      .string()
      .regex(/^ASI(0[1-9]|10)$/, "ASI01 to ASI10")
      .optional(),
    atlas: z.string().regex(/^AML\.T\d{4}(\.\d{3})?$/, "a MITRE ATLAS technique id, e.g. AML.T0051.000"),
    attack: z.strictObject({
      decoded: Text.describe("The attack in plain words"),
      sent: Text.describe("The attack as sent, after the strategies"),
    }),
  })
  .describe("Set by the security library on the probes it expands; a hand-written probe leaves it out");
export type ProbeOrigin = z.infer<typeof ProbeOrigin>;

export const SecurityProbe = z.strictObject({
  id: LocalId.refine((id) => !id.startsWith(DETECTOR_PREFIX), {
    message: `probe ids may not start with ${DETECTOR_PREFIX}: it names the built-in detectors' findings`,
  }).meta({ not: { pattern: startsWithOneOf([DETECTOR_PREFIX]) } }),
  category: ProbeCategory,
  severity: Severity,
  description: z.string().max(2000).optional(),
  system: Text.optional(),
  inject: z
    .strictObject({
      tool: ToolName,
      field: ResultPath.describe(
        "Field of the tool's mocked result that receives the text: a key, or a dotted path (order.notes, items.0.name)",
      ),
      text: Text,
    })
    .optional(),
  plant: z
    .array(z.strictObject({ tool: ToolName, field: ResultPath, value: JsonValue }))
    .min(1)
    .max(20)
    .optional()
    .describe(
      "Values put in every mocked result of a tool (PII, a secret) for the probe to see whether the agent gives them away",
    ),
  canary: z.boolean().optional().describe("Plant a unique canary token in the system prompt"),
  user: Text.describe("The user's message (the first, when next_turns follow)"),
  next_turns: z
    .array(ProbeTurn)
    .min(1)
    .max(20)
    .optional()
    .describe("User messages sent after user, one turn each, in order: an attack spread over a conversation"),
  fail_if: z.array(Expectation).min(1).max(50),
  repeat: RunLimits.repeat.optional(),
  library: ProbeOrigin.optional(),
});
export type SecurityProbe = z.infer<typeof SecurityProbe>;

/** What calling a tool does, for the security library's families that need a data-returning or a destructive target. */
export const ToolEffect = z.enum(["read", "write", "destructive"]);
export type ToolEffect = z.infer<typeof ToolEffect>;

export const Tool = z.strictObject({
  name: ToolName,
  description: z.string().max(4000).optional(),
  effect: ToolEffect.optional().describe(
    "What a call does: read (returns data), write (changes something that can be undone), destructive (cannot be undone: a deletion, a payment)",
  ),
  parameters: JsonObject.optional().describe("JSON Schema of the arguments, as in OpenAI `tools`"),
  mock: z
    .array(
      z
        .strictObject({
          when: JsonObject.optional().describe("Partial match on the call's arguments; omit for the default"),
          return: JsonValue,
        })
        .describe("`return` is the tool result handed back to the agent"),
    )
    .max(200)
    .optional(),
});
export type Tool = z.infer<typeof Tool>;

/** A drop larger than `max_drop` (of a pass rate, or of a judged score) with p below 1 − `confidence` is a regression. */
export const NoRegression = z.strictObject({
  max_drop: Fraction.default(0.05),
  confidence: z.number().min(0.5).max(0.999).default(0.95),
});

export const GateSpec = z
  .strictObject({
    id: GateCode,
    title: z.string().min(1).max(200).optional(),
    require: z.strictObject({
      ...REQUIREMENT_FIELDS,
      no_regression: NoRegression.optional().describe(
        "Compared with the base branch by the release decision: alone, over every case of the spec; beside another requirement, over that requirement's cases",
      ),
    }),
  })
  // How a gate's requirements combine is checked with the document's other rules (SPEC_INCONSISTENT).
  .superRefine((gate, ctx) =>
    checkRequire(gate.require, (path, message) =>
      ctx.addIssue({ code: "custom", path: ["require", ...path], message, params: WHOLE_DOCUMENT }),
    ),
  );
export type GateSpec = z.infer<typeof GateSpec>;

export const TestSpecDocumentShape = z.strictObject({
  schema_version: z.literal("1"),
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "use letters, digits, '.', '_' and '-'"),
  description: z.string().max(4000).optional(),
  defaults: z
    .strictObject({
      max_steps: RunLimits.max_steps.default(8),
      timeout_ms: RunLimits.timeout_ms.default(30_000),
      repeat: RunLimits.repeat.default(1),
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(64)
        .optional()
        .describe(
          "Conversations held at once in a run, default 8 (never more than the environment's endpoint.max_concurrency calls to its agent)",
        ),
      run_timeout_ms: z
        .number()
        .int()
        .min(1000)
        .max(86_400_000)
        .optional()
        .describe(
          "The run's deadline from when it starts, default 6 hours: no conversation starts after it, and a wait the agent asks for must end before it",
        ),
      retry_failed: z
        .number()
        .int()
        .min(0)
        .max(5)
        .optional()
        .describe(
          "Tries a scenario's conversation again, up to this many times, when its checks failed, before it counts: every try is kept in the evidence, the last one is evaluated. Security probes are never retried: a probe that trips once is a finding",
        ),
      budget: z
        .strictObject({
          max_tokens: z
            .number()
            .int()
            .min(1)
            .max(10_000_000_000)
            .optional()
            .describe(
              "Tokens the agent may use in the run, as its answers report them (the judge's are apart): once reached, no conversation starts and the run fails with budget_exceeded",
            ),
          max_cost_usd: z
            .number()
            .positive()
            .max(1_000_000)
            .optional()
            .describe(
              "What the agent's answers may cost, at the environment's endpoint.pricing: once reached, no conversation starts and the run fails with budget_exceeded",
            ),
        })
        .refine(
          (budget) => budget.max_tokens !== undefined || budget.max_cost_usd !== undefined,
          "set max_tokens, max_cost_usd or both",
        )
        .meta({ minProperties: 1 })
        .optional()
        .describe(
          "Checked by the gate 'budget' the run gets: inconclusive when the agent does not report its usage (or a model has no price)",
        ),
    })
    .optional(),
  tools: z.array(Tool).max(128).optional(),
  scenarios: z.array(Scenario).max(500).optional(),
  security: z.array(SecurityProbe).max(500).optional(),
  security_coverage: SecurityCoverage.optional(),
  gates: z.array(GateSpec).min(1).max(50),
});
export type TestSpecDocument = z.infer<typeof TestSpecDocumentShape>;

export { LibraryEntry, SecurityCoverage } from "./security-library/entry.js";

/**
 * The document as written: `security:` holds probes and security library entries
 * (`- preset: owasp-llm-2025`, `- family: direct-injection`), which expand at upload into probes.
 */
export const TestSpecDocumentInputShape = TestSpecDocumentShape.extend({
  security: z
    .array(z.union([SecurityProbe, LibraryEntry]))
    .max(500)
    .optional()
    .describe("Security probes, and security library entries (a preset or a family) that expand into probes at upload"),
});
