import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { policyChanges, type Policy } from "../../../server/changes/policy-changes.js";
import { AssureConfig } from "../../../server/contract/index.js";
import { TestSpecDocument } from "../../../server/specs/document.js";

const EXAMPLE = parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8"));
const CONFIG = {
  version: 1,
  project: "prj_1",
  forks: "approve",
  runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging", "preview"] }],
};

/** The base's policy, and the head's after `edit` (on copies of the example spec and config). */
function compare(edit: (spec: any, config: any) => void) {
  const policy = (spec: unknown, config: unknown): Policy => ({
    config: config === null ? null : AssureConfig.parse(config),
    specs: new Map(spec === null ? [] : [[EXAMPLE.name as string, TestSpecDocument.parse(spec)]]),
  });
  const spec = structuredClone(EXAMPLE);
  const config = structuredClone(CONFIG);
  edit(spec, config);
  return policyChanges(policy(EXAMPLE, CONFIG), policy(spec, config));
}

const messages = (edit: (spec: any, config: any) => void) =>
  compare(edit).map((c) => `${c.kind} ${c.where}: ${c.message}`);

describe("policy changes of a pull request against its base branch", () => {
  it("finds none when nothing changed", () => {
    expect(compare(() => {})).toEqual([]);
  });

  it("lists each kind of removal", () => {
    expect(messages((spec) => spec.scenarios.splice(1, 1))).toEqual([
      "removed refund-agent: scenarios[1]: the scenario 'unknown-order' is removed",
    ]);
    expect(messages((spec) => spec.scenarios[0].turns[1].expect.splice(0, 1))).toContain(
      "removed refund-agent: scenarios[0].turns[1].expect[1]: the check 'full-refund turns[1].expect[1]' is removed",
    );
    expect(messages((spec) => spec.security.splice(0, 1))[0]).toMatch(
      /^removed refund-agent: security\[0\]: the security probe '.+' is removed$/,
    );
    expect(messages((spec) => (spec.gates = spec.gates.filter((g: { id: string }) => g.id !== "DET")))[0]).toMatch(
      /^removed refund-agent: gates\[\d\]: the gate 'DET' is removed$/,
    );
    const withoutMetric = messages((spec) => {
      delete spec.scenarios[0].metrics;
      spec.gates = spec.gates.filter((g: { require: { metric?: string } }) => g.require.metric === undefined);
    });
    expect(withoutMetric).toEqual([
      expect.stringMatching(/the metric '.+' is removed$/),
      expect.stringMatching(/the gate '.+' is removed$/),
    ]);
    expect(messages((_, config) => config.runs[0].environments.pop())).toEqual([
      "removed .assure/config.yml: runs: '.assure/specs/*.yaml in preview' no longer runs",
    ]);
    const gone = policyChanges(
      { config: AssureConfig.parse(CONFIG), specs: new Map([["refund-agent", TestSpecDocument.parse(EXAMPLE)]]) },
      { config: null, specs: new Map() },
    );
    expect(gone.map((c) => c.message)).toEqual([
      "the config is removed: no spec would run",
      "the spec 'refund-agent' is removed",
    ]);
  });

  it("lists a table's rows removed", () => {
    const base = structuredClone(EXAMPLE);
    base.scenarios[1].vars = [
      { id: "Z-999", order: "Z-999" },
      { id: "Z-998", order: "Z-998" },
    ];
    const head = structuredClone(base);
    head.scenarios[1].vars.pop();
    const changes = policyChanges(
      { config: null, specs: new Map([["x", TestSpecDocument.parse(base)]]) },
      { config: null, specs: new Map([["x", TestSpecDocument.parse(head)]]) },
    );
    expect(changes.map((c) => `${c.kind} ${c.where}: ${c.message}`)).toEqual([
      "removed x: scenarios[1].vars: the row 'unknown-order[Z-998]' of the scenario's table is removed",
    ]);
  });

  it("lists a check whose definition changed, for a person to judge, and a budget raised or removed", () => {
    expect(messages((spec) => (spec.scenarios[0].turns[1].expect[0].tool_called.args.amount = 1))).toEqual([
      "changed refund-agent: scenarios[0].turns[1].expect[0]: the check 'full-refund turns[1].expect[0]' is changed: approve it if it is not weaker",
    ]);
    expect(messages((spec) => (spec.scenarios[0].metrics[0].criteria = "Anything goes."))[0]).toMatch(
      /^changed refund-agent: scenarios\[0\]\.metrics\[0\]: the check 'full-refund metric .+' is changed/,
    );
    expect(messages((spec) => (spec.security[0].fail_if = [{ response: { contains: ["never said"] } }]))[0]).toMatch(
      /^changed refund-agent: security\[0\]: the check '.+ probe' is changed/,
    );
    // What a tool's mock answers is part of every case that calls it.
    expect(messages((spec) => (spec.tools[0].mock[0].return.notes = "fragile"))).toEqual([
      `changed refund-agent: tools[0]: the tool '${EXAMPLE.tools[0].name}' is changed (its description, parameters or mocks): approve it if it tests the same`,
    ]);
    const withBudget = (maxTokens: number | undefined) => {
      const spec = structuredClone(EXAMPLE);
      if (maxTokens !== undefined) spec.defaults.budget = { max_tokens: maxTokens };
      return { config: null, specs: new Map([["x", TestSpecDocument.parse(spec)]]) };
    };
    expect(policyChanges(withBudget(1000), withBudget(5000)).map((c) => c.message)).toEqual([
      "the token budget changes from 1000 to 5000",
    ]);
    expect(policyChanges(withBudget(1000), withBudget(undefined)).map((c) => c.message)).toEqual([
      "the token budget changes from 1000 to none",
    ]);
    expect(policyChanges(withBudget(1000), withBudget(500))).toEqual([]);
  });

  it("counts more tries again of a failed case as a loosening, fewer as a tightening", () => {
    expect(messages((spec) => (spec.defaults.retry_failed = 2))).toEqual([
      "loosened refund-agent: defaults.retry_failed: failed cases are tried again up to 2 time(s), not 0",
    ]);
    const retrying = structuredClone(EXAMPLE);
    retrying.defaults.retry_failed = 2;
    const policy = (spec: unknown): Policy => ({ config: null, specs: new Map([["x", TestSpecDocument.parse(spec)]]) });
    expect(policyChanges(policy(retrying), policy(EXAMPLE))).toEqual([]);
  });

  it("counts a coverage gate's other preset as a change of its requirement", () => {
    const covering = (preset: string) => {
      const spec = structuredClone(EXAMPLE);
      spec.gates.push({ id: "COV", require: { coverage: preset } });
      return { config: null, specs: new Map([["x", TestSpecDocument.parse(spec)]]) };
    };
    expect(policyChanges(covering("owasp-llm-2025"), covering("owasp-agentic-2026")).map((c) => c.message)).toEqual([
      "the gate 'COV' now requires coverage owasp-agentic-2026 instead of coverage owasp-llm-2025",
    ]);
    expect(policyChanges(covering("owasp-llm-2025"), covering("owasp-llm-2025"))).toEqual([]);
  });

  it("lists each kind of loosening", () => {
    const metricGate = EXAMPLE.gates.findIndex((g: { require: { metric?: string } }) => g.require.metric !== undefined);
    const severityGate = EXAMPLE.gates.findIndex(
      (g: { require: { max_finding_severity?: string } }) => g.require.max_finding_severity !== undefined,
    );
    expect(messages((spec) => (spec.scenarios[0].metrics[0].threshold -= 0.1))[0]).toMatch(
      /^loosened refund-agent: scenarios\[0\]\.metrics\[0\]\.threshold: the threshold of '.+' lowered from/,
    );
    expect(messages((spec) => (spec.gates[metricGate].require.min_pass_rate -= 0.1))[0]).toMatch(
      /min_pass_rate of '.+' lowered/,
    );
    const withConfidence = (confidence: number | undefined) => {
      const spec = structuredClone(EXAMPLE);
      spec.gates[metricGate].require.confidence = confidence;
      return { config: null, specs: new Map([["x", TestSpecDocument.parse(spec)]]) };
    };
    expect(policyChanges(withConfidence(0.95), withConfidence(0.8)).map((c) => c.message)).toEqual([
      expect.stringMatching(/confidence of '.+' lowered from 0.95 to 0.8/),
    ]);
    expect(policyChanges(withConfidence(0.95), withConfidence(undefined)).map((c) => c.message)).toEqual([
      expect.stringMatching(/lowered from 0.95 to none/),
    ]);
    expect(policyChanges(withConfidence(undefined), withConfidence(0.95))).toEqual([]);
    expect(messages((spec) => (spec.gates[severityGate].require.max_finding_severity = "critical"))[0]).toMatch(
      /now allows findings up to critical/,
    );
    expect(messages((spec) => (spec.gates[severityGate].require = { expectations: "all" }))[0]).toMatch(
      /now requires expectations instead of max_finding_severity/,
    );
    expect(messages((spec) => (spec.defaults.repeat = 1))).toEqual([
      "loosened refund-agent: scenarios[0].repeat: repeat lowered from 3 to 1",
      "loosened refund-agent: scenarios[1].repeat: repeat lowered from 3 to 1",
    ]);
    const probeRepeat = (repeat: number) => {
      const spec = structuredClone(EXAMPLE);
      spec.security[0].repeat = repeat;
      return { config: null, specs: new Map([["x", TestSpecDocument.parse(spec)]]) };
    };
    expect(policyChanges(probeRepeat(3), probeRepeat(1)).map((c) => `${c.where}: ${c.message}`)).toEqual([
      "x: security[0].repeat: repeat lowered from 3 to 1",
    ]);
    expect(messages((_, config) => (config.forks = "run"))).toEqual([
      "loosened .assure/config.yml: forks: forks changes from 'approve' to 'run'",
    ]);
    expect(messages((_, config) => (config.project = "prj_2"))[0]).toMatch(/^loosened .assure\/config.yml: project/);
  });

  it("does not count additions and tightenings", () => {
    const metricGate = EXAMPLE.gates.findIndex((g: { require: { metric?: string } }) => g.require.metric !== undefined);
    expect(
      compare((spec, config) => {
        spec.scenarios.push({ id: "another", turns: [{ user: "Hello", expect: [{ response: { matches: "help" } }] }] });
        spec.scenarios[0].expect.push({ tool_not_called: "delete_account" });
        spec.scenarios[0].metrics[0].threshold = Math.min(1, spec.scenarios[0].metrics[0].threshold + 0.05);
        spec.gates[metricGate].require.min_pass_rate = Math.min(1, spec.gates[metricGate].require.min_pass_rate + 0.05);
        spec.gates.push({ id: "MORE", require: { expectations: "all" } });
        config.runs[0].environments.push("production");
        config.forks = "approve";
      }),
    ).toEqual([]);
  });
});

describe("everything that defines a case is policy", () => {
  it("lists a scenario whose user turns, system prompt or limits are rewritten", () => {
    const rewritten = messages((spec) => (spec.scenarios[0].turns[0].user = "Hello there."));
    expect(rewritten).toEqual([
      "changed refund-agent: scenarios[0]: the conversation of 'full-refund' is changed (its system prompt, user turns or limits): approve it if it tests the same",
    ]);
    expect(messages((spec) => (spec.scenarios[1].system = "Always say yes."))).toEqual([
      expect.stringMatching(/^changed refund-agent: scenarios\[1\]: the conversation of 'unknown-order'/),
    ]);
    expect(messages((spec) => (spec.scenarios[0].max_steps = 1))).toEqual([
      expect.stringMatching(/^changed refund-agent: scenarios\[0\]: the conversation of 'full-refund'/),
    ]);
    expect(messages((spec) => (spec.defaults.timeout_ms = 600_000))).toEqual([
      "changed refund-agent: defaults.timeout_ms: defaults.timeout_ms changes from 30000 to 600000",
    ]);
    // A scenario's description is for people: not a change.
    expect(messages((spec) => (spec.scenarios[0].description = "reworded"))).toEqual([]);
  });

  it("lists a table's row whose values changed", () => {
    const base = structuredClone(EXAMPLE);
    base.scenarios[1].vars = [
      { id: "Z-999", order: "Z-999" },
      { id: "Z-998", order: "Z-998" },
    ];
    const head = structuredClone(base);
    head.scenarios[1].vars[1].order = "Z-000";
    const changes = policyChanges(
      { config: null, specs: new Map([["x", TestSpecDocument.parse(base)]]) },
      { config: null, specs: new Map([["x", TestSpecDocument.parse(head)]]) },
    );
    expect(changes.map((c) => `${c.kind} ${c.where}: ${c.message}`)).toEqual([
      "changed x: scenarios[1].vars: the row 'unknown-order[Z-998]' of the scenario's table is changed: approve it if it tests the same",
    ]);
  });

  it("lists a probe whose attack or severity changed", () => {
    expect(messages((spec) => (spec.security[0].user = "Hi"))).toEqual([
      expect.stringMatching(/^changed refund-agent: security\[0\]: the check '.+ probe' is changed/),
    ]);
    expect(messages((spec) => (spec.security[0].severity = "info"))).toEqual([
      expect.stringMatching(/^changed refund-agent: security\[0\]: the check '.+ probe' is changed/),
    ]);
  });

  it("lists the base branch's settings relaxed, and a run moved to another agent", () => {
    expect(messages((_, config) => (config.policy_changes = "report"))).toEqual([
      "loosened .assure/config.yml: policy_changes: policy changes would no longer need an approval (require_approval → report)",
    ]);
    expect(messages((_, config) => (config.flaky = { mode: "quarantine", threshold: 0.2 }))).toEqual([
      "loosened .assure/config.yml: flaky.mode: flaky cases would no longer block (report → quarantine)",
    ]);
    expect(messages((_, config) => (config.baseline = { depth: 200, max_age_days: 14 }))).toEqual([
      "changed .assure/config.yml: baseline: where a baseline is looked for changes (depth 50 → 200, max_age_days 14 → 14)",
    ]);
    expect(messages((_, config) => (config.runs[0].on_deployment = "preview"))).toEqual([
      "changed .assure/config.yml: runs: '.assure/specs/*.yaml in staging' tests the deployment of 'preview' instead of the environment's own agent",
      "changed .assure/config.yml: runs: '.assure/specs/*.yaml in preview' tests the deployment of 'preview' instead of the environment's own agent",
    ]);
  });

  it("lists runs executed outside the service let count, or a run moved outside it, as loosenings", () => {
    expect(messages((_, config) => (config.executed_outside_service = "allow"))).toEqual([
      "loosened .assure/config.yml: executed_outside_service: runs executed outside the service and uploaded would count toward decisions (never → allow)",
    ]);
    expect(messages((_, config) => (config.runs[0].executor = "local"))).toEqual([
      "loosened .assure/config.yml: runs: '.assure/specs/*.yaml in staging' would be executed outside the service and uploaded",
      "loosened .assure/config.yml: runs: '.assure/specs/*.yaml in preview' would be executed outside the service and uploaded",
    ]);
  });

  it("finds a spec moved outside the service by an entry of its own above the base's, or by the base's glob written twice", () => {
    // A narrower glob listed first takes its file from the base's entry, which stays as it was.
    const narrower = messages((_, config) =>
      config.runs.unshift({ ...config.runs[0], specs: [".assure/specs/refund.yaml"], executor: "local" }),
    );
    expect(narrower).toContain(
      "loosened .assure/config.yml: runs: '.assure/specs/refund.yaml in staging' would be executed outside the service and uploaded",
    );
    const twice = messages((_, config) => config.runs.unshift({ ...config.runs[0], executor: "local" }));
    expect(twice).toContain(
      "loosened .assure/config.yml: runs: '.assure/specs/*.yaml in staging' would be executed outside the service and uploaded",
    );
  });
});

describe("policy changes that dilute a metric gate, or move a spec to another environment", () => {
  const metricGate = EXAMPLE.gates.find((g: { require: { metric?: string } }) => g.require.metric !== undefined);
  const metric = metricGate.require.metric as string;

  it("lists samples of a gated metric added by more repeats or a new scenario with that metric", () => {
    expect(messages((spec) => (spec.defaults.repeat = 50))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^changed refund-agent: gates\\[\\d\\]\\.require\\.metric: the gate '${metricGate.id}' would count more samples of '${metric}'`,
        ),
      ),
    ]);
    const filler = messages((spec) =>
      spec.scenarios.push({
        id: "filler",
        repeat: 300,
        turns: [{ user: "Hello" }],
        metrics: [{ id: metric, threshold: 0, criteria: "Anything." }],
      }),
    );
    expect(filler).toEqual([expect.stringContaining("would count more samples")]);
    // A scenario without the metric adds nothing to it.
    expect(
      messages((spec) =>
        spec.scenarios.push({ id: "other", turns: [{ user: "Hello", expect: [{ response: { matches: "." } }] }] }),
      ),
    ).toEqual([]);
  });

  it("lists a spec that runs in another environment after its file moved, though the globs are the same", () => {
    const config = AssureConfig.parse({
      version: 1,
      project: "p",
      runs: [
        { specs: [".assure/prod/*.yaml"], environments: ["production"] },
        { specs: [".assure/stub/*.yaml"], environments: ["stub"] },
      ],
    });
    const spec = TestSpecDocument.parse(EXAMPLE);
    const base: Policy = {
      config,
      specs: new Map([[spec.name, spec]]),
      runs: new Map([["'refund-agent' in production", null]]),
    };
    const head: Policy = {
      config,
      specs: new Map([[spec.name, spec]]),
      runs: new Map([["'refund-agent' in stub", null]]),
    };
    expect(policyChanges(base, head).map((c) => `${c.kind} ${c.message}`)).toEqual([
      "removed 'refund-agent' in production no longer runs",
    ]);
  });
});

describe("policy changes to a gate's no_regression", () => {
  const withNoRegression = (noRegression: { max_drop: number; confidence: number } | undefined) => {
    const spec = structuredClone(EXAMPLE);
    const det = spec.gates.find((g: { id: string }) => g.id === "DET");
    if (noRegression) det.require.no_regression = noRegression;
    return {
      config: AssureConfig.parse(CONFIG),
      specs: new Map([[EXAMPLE.name as string, TestSpecDocument.parse(spec)]]),
    } satisfies Policy;
  };
  const between = (base: Parameters<typeof withNoRegression>[0], head: Parameters<typeof withNoRegression>[0]) =>
    policyChanges(withNoRegression(base), withNoRegression(head)).map((c) => `${c.kind} ${c.message}`);

  it("lists it removed, a larger max_drop and a higher confidence as loosenings", () => {
    expect(between({ max_drop: 0.05, confidence: 0.95 }, undefined)).toEqual([
      "removed 'DET' no longer compares with the base branch",
    ]);
    expect(between({ max_drop: 0.05, confidence: 0.95 }, { max_drop: 0.2, confidence: 0.95 })).toEqual([
      "loosened 'DET' now lets a case drop by 0.2 (was 0.05)",
    ]);
    expect(between({ max_drop: 0.05, confidence: 0.9 }, { max_drop: 0.05, confidence: 0.99 })).toEqual([
      "loosened 'DET' now needs 0.99 confidence to call a drop a regression (was 0.9)",
    ]);
  });

  it("lets it be added or tightened without approval", () => {
    expect(between(undefined, { max_drop: 0.05, confidence: 0.95 })).toEqual([]);
    expect(between({ max_drop: 0.1, confidence: 0.99 }, { max_drop: 0.05, confidence: 0.9 })).toEqual([]);
  });
});
