import { z } from "zod";
import { Expectation, argumentsOf } from "./expectations/index.js";
import { Fraction, JsonObject, JsonValue, LocalId, Text, ToolName } from "./primitives.js";
import { fillScenario } from "./scenario-cases.js";
import {
  MAX_AGENT_CALLS_PER_SPEC,
  MAX_CONVERSATIONS_PER_SPEC,
  TEMPLATED_SCENARIO_FIELDS,
  countAgentCalls,
  countConversations,
  placeholdersIn,
  rowKey,
} from "./vars.js";

/** The test specification format, version 1. `examples/refund-agent.yaml` is a complete example. */

export { Expectation } from "./expectations/index.js";

const GateCode = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,31}$/,
    "gate ids are short codes: a letter, then letters, digits, '_' or '-' (at most 32)",
  );

/**
 * How the service names the evaluations it makes itself, by their kind: `expect.tool_called`,
 * `probe.<probe id>`, `detector.<name>` (a spec metric is named by its own id). A spec's metric
 * may not take one of these prefixes, nor a probe the detectors' (its findings share the name).
 */
export const EVALUATION_PREFIXES = {
  expectation: "expect.",
  probe: "probe.",
  detector: "detector.",
  budget: "budget.",
} as const;
export const RESERVED_METRIC_PREFIXES = Object.values(EVALUATION_PREFIXES);

/** A release decision's own gate, for what a pull request removes or relaxes in the base branch's policy. */
export const POLICY_GATE_ID = "policy";

/** The gate a run gets when its spec sets `defaults.budget`. */
export const BUDGET_GATE_ID = "budget";

/** From most to least severe; a finding's `severity_rank` counts up from `info` (0). */
export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;

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
  }),
  threshold: Fraction.describe("A sample passes when its score is at least this"),
  criteria: Text.describe("What the judge checks, in plain language"),
  scope: z.enum(["conversation", "turn"]).default("conversation"),
});

/** Where a scenario's table is in the repository. */
export const VarsFilePath = z
  .string()
  .max(500)
  .refine(
    (path) =>
      /^\.assure\/[^\0\\%]+\.(csv|jsonl)$/.test(path) &&
      path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."),
    "a .csv or .jsonl file under .assure/, from the repository's root, without '.' or '..' segments",
  );

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

export const SecurityProbe = z.strictObject({
  id: LocalId.refine((id) => !id.startsWith(EVALUATION_PREFIXES.detector), {
    message: `probe ids may not start with ${EVALUATION_PREFIXES.detector}: it names the built-in detectors' findings`,
  }),
  category: ProbeCategory,
  severity: Severity,
  description: z.string().max(2000).optional(),
  system: Text.optional(),
  inject: z
    .strictObject({
      tool: ToolName,
      field: z.string().min(1).max(200).describe("Field of the tool's mocked result that receives the text"),
      text: Text,
    })
    .optional(),
  canary: z.boolean().optional().describe("Plant a unique canary token in the system prompt"),
  user: Text,
  fail_if: z.array(Expectation).min(1).max(50),
  repeat: RunLimits.repeat.optional(),
});
export type SecurityProbe = z.infer<typeof SecurityProbe>;

export const Tool = z.strictObject({
  name: ToolName,
  description: z.string().max(4000).optional(),
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
      expectations: z.literal("all").optional(),
      metric: LocalId.optional(),
      min_pass_rate: Fraction.optional(),
      confidence: z.number().min(0.5).max(0.999).optional(),
      max_finding_severity: Severity.optional(),
      no_regression: NoRegression.optional().describe(
        "Compared with the base branch by the release decision: alone, over every case of the spec; beside another requirement, over that requirement's cases",
      ),
    }),
  })
  .superRefine((gate, ctx) => {
    const r = gate.require;
    const kinds = [r.expectations !== undefined, r.metric !== undefined, r.max_finding_severity !== undefined];
    if (kinds.filter(Boolean).length > 1 || (kinds.every((kind) => !kind) && r.no_regression === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["require"],
        message:
          "require one of: expectations, metric (with min_pass_rate), max_finding_severity — and/or no_regression",
      });
      return;
    }
    if (r.metric === undefined && (r.min_pass_rate !== undefined || r.confidence !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["require"], message: "min_pass_rate and confidence go with metric" });
    }
    if (r.metric !== undefined && r.min_pass_rate === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["require", "min_pass_rate"],
        message: "a metric gate needs min_pass_rate",
      });
    }
  });
export type GateSpec = z.infer<typeof GateSpec>;

const TestSpecDocumentShape = z.strictObject({
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
        .optional()
        .describe(
          "Checked by the gate 'budget' the run gets: inconclusive when the agent does not report its usage (or a model has no price)",
        ),
    })
    .optional(),
  tools: z.array(Tool).max(128).optional(),
  scenarios: z.array(Scenario).max(500).optional(),
  security: z.array(SecurityProbe).max(500).optional(),
  gates: z.array(GateSpec).min(1).max(50),
});

export const TestSpecDocument = TestSpecDocumentShape.superRefine(checkReferences).meta({
  id: "TestSpecDocument",
  title: "assure test specification",
  description: "Format version 1. Scenarios, security probes and the gates that decide a release.",
});
export type TestSpecDocument = z.infer<typeof TestSpecDocumentShape>;

type Path = (string | number)[];

/** Checks that need the whole document: unique ids and references that must resolve. */
function checkReferences(doc: TestSpecDocument, ctx: z.RefinementCtx): void {
  const problem = (path: Path, message: string) => ctx.addIssue({ code: "custom", path, message });
  const scenarios = doc.scenarios ?? [];
  const probes = doc.security ?? [];
  const tools = new Set<string>();

  if (scenarios.length === 0 && probes.length === 0) {
    problem(["scenarios"], "a spec needs at least one scenario or security probe");
  }
  (doc.tools ?? []).forEach((tool, i) => {
    if (tools.has(tool.name)) problem(["tools", i, "name"], `duplicate tool name '${tool.name}'`);
    tools.add(tool.name);
  });

  const checkTool = (name: string, path: Path) => {
    if (!tools.has(name)) problem(path, `tool '${name}' is not defined under tools`);
  };
  const checkExpectations = (list: Expectation[] | undefined, path: Path, canaryAllowed: boolean) => {
    (list ?? []).forEach((entry, i) => {
      const found = argumentsOf(entry);
      if (!found) return; // already reported by the entry's own schema
      const { kind, args } = found;
      const at: Path = [...path, i, kind.name];
      for (const tool of kind.namesTools?.(args) ?? []) checkTool(tool.name, [...at, ...tool.path]);
      if (kind.needsCanary && !canaryAllowed) {
        problem(at, `${kind.name} applies only to a security probe with canary: true`);
      }
    });
  };

  const ids = new Map<string, string>();
  const claimId = (id: string, path: Path) => {
    const owner = ids.get(id);
    if (owner) problem(path, `id '${id}' is already used by ${owner}`);
    else ids.set(id, path.slice(0, 2).join("[") + "]");
  };
  const metrics = new Set<string>();
  scenarios.forEach((scenario, s) => {
    claimId(scenario.id, ["scenarios", s, "id"]);
    scenario.turns.forEach((turn, t) => checkExpectations(turn.expect, ["scenarios", s, "turns", t, "expect"], false));
    checkExpectations(scenario.expect, ["scenarios", s, "expect"], false);
    const own = new Set<string>();
    (scenario.metrics ?? []).forEach((metric, m) => {
      if (own.has(metric.id)) {
        problem(["scenarios", s, "metrics", m, "id"], `duplicate metric '${metric.id}' in this scenario`);
      }
      own.add(metric.id);
      metrics.add(metric.id);
    });
    checkTable(scenario, ["scenarios", s], problem);
  });
  checkTemplatedMocks(doc, problem);
  const conversations = countConversations(doc);
  if (conversations > MAX_CONVERSATIONS_PER_SPEC) {
    problem(
      ["scenarios"],
      `the spec asks for ${conversations} conversations (each scenario's rows times its repeats, and the probes' repeats); at most ${MAX_CONVERSATIONS_PER_SPEC}`,
    );
  } else {
    const calls = countAgentCalls(doc);
    if (calls > MAX_AGENT_CALLS_PER_SPEC) {
      problem(
        ["scenarios"],
        `the spec may call its agent ${calls} times (each conversation's turns times max_steps, every try of retry_failed); at most ${MAX_AGENT_CALLS_PER_SPEC}`,
      );
    }
  }
  probes.forEach((probe, p) => {
    claimId(probe.id, ["security", p, "id"]);
    if (probe.inject) checkTool(probe.inject.tool, ["security", p, "inject", "tool"]);
    checkExpectations(probe.fail_if, ["security", p, "fail_if"], probe.canary === true);
  });

  const gates = new Set<string>();
  doc.gates.forEach((gate, g) => {
    if (gates.has(gate.id)) problem(["gates", g, "id"], `duplicate gate id '${gate.id}'`);
    if (gate.id === BUDGET_GATE_ID && doc.defaults?.budget) {
      problem(["gates", g, "id"], `the gate id '${BUDGET_GATE_ID}' is the one defaults.budget adds`);
    }
    if (gate.id === POLICY_GATE_ID) {
      problem(
        ["gates", g, "id"],
        `the gate id '${POLICY_GATE_ID}' is a release decision's own (the policy changes of a pull request)`,
      );
    }
    gates.add(gate.id);
    const metric = gate.require.metric;
    if (metric !== undefined && !metrics.has(metric)) {
      problem(["gates", g, "require", "metric"], `metric '${metric}' is not defined by any scenario`);
    }
  });
}

/** Row problems reported per table; a table with more says how many more. */
const MAX_ROW_PROBLEMS = 20;
const ROW_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const formatPath = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, part) => (typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)),
    "",
  );

/**
 * A scenario's table: every `{{name}}` it uses is a column, each row has a value for it, row
 * keys are unique, and the scenario each row fills in is a valid scenario (a value that is
 * exactly `{{name}}` takes the row's type, which must fit where it goes).
 */
function checkTable(scenario: Scenario, at: Path, problem: (path: Path, message: string) => void): void {
  if (scenario.vars === undefined) {
    if (scenario.vars_file !== undefined) {
      problem(
        [...at, "vars_file"],
        "the table is read from the repository by the App and the Action, which upload it with the spec; to upload the spec yourself, send it with its tables ({file: {…, tables}}) or inline the rows as vars",
      );
    }
    return;
  }
  const rows = scenario.vars;
  const { vars: _table, ...template } = scenario;
  const used = placeholdersIn(TEMPLATED_SCENARIO_FIELDS.map((field) => scenario[field]));
  const columns = new Set(rows.flatMap((row) => Object.keys(row)));
  for (const name of used) {
    if (!columns.has(name)) {
      problem([...at, "vars"], `unknown {{${name}}}: no row of this scenario's vars has a column '${name}'`);
    }
  }
  let reported = 0;
  const rowProblem = (r: number, path: Path, message: string) => {
    if (++reported <= MAX_ROW_PROBLEMS) problem([...at, "vars", r, ...path], `row ${r + 1}: ${message}`);
  };
  const keys = new Map<string, number>();
  rows.forEach((row, r) => {
    const key = rowKey(row, r);
    if (row.id !== undefined && !ROW_ID.test(key)) {
      rowProblem(r, ["id"], "an id is a string or number of letters, digits, '.', '_', ':' and '-' (at most 64)");
    }
    const earlier = keys.get(key);
    if (earlier !== undefined) {
      rowProblem(r, ["id"], `its key '${key}' is row ${earlier + 1}'s too: give every row a unique id`);
    } else keys.set(key, r);
    const missing = [...used].filter((name) => columns.has(name) && !Object.hasOwn(row, name));
    if (missing.length > 0) {
      rowProblem(
        r,
        [missing[0]!],
        `no value for column '${missing[0]}'${missing.length > 1 ? ` (nor ${missing.slice(1).join(", ")})` : ""}`,
      );
      return;
    }
    if (used.size === 0) return;
    const filled = Scenario.safeParse(fillScenario(template, row));
    if (!filled.success) {
      const issue = filled.error.issues[0]!;
      rowProblem(r, [], `filled in, ${formatPath(issue.path)}: ${issue.message}`);
    }
  });
  if (reported > MAX_ROW_PROBLEMS) {
    problem([...at, "vars"], `${reported - MAX_ROW_PROBLEMS} more row problems not shown`);
  }
}

/** `{{name}}` in the tools' mocks is filled from the row a conversation plays: it must be a column of some scenario's table. */
function checkTemplatedMocks(doc: TestSpecDocument, problem: (path: Path, message: string) => void): void {
  const tables = (doc.scenarios ?? []).flatMap((scenario) => scenario.vars ?? []);
  if (tables.length === 0) return; // without tables, {{…}} in a mock is just text
  const columns = new Set(tables.flatMap((row) => Object.keys(row)));
  (doc.tools ?? []).forEach((tool, i) => {
    for (const name of placeholdersIn(tool.mock)) {
      if (!columns.has(name)) {
        problem(["tools", i, "mock"], `unknown {{${name}}}: no scenario's vars has a column '${name}'`);
      }
    }
  });
}
