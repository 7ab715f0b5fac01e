import type { AssureConfig } from "../contract/assure-config.js";
import type { GateSpec, Scenario, TestSpecDocument } from "../specs/document.js";
import { SEVERITY_RANK } from "../specs/severity-rank.js";
import { contentAddress } from "../specs/canonical-json.js";
import { scenarioCases } from "../specs/scenario-cases.js";
import { specCases } from "./cases.js";

/** Each check of a spec with what it checks (a metric without its threshold, a probe without its repeats). */
function* checksOf(spec: TestSpecDocument): Generator<{ case_id: string; kind: string; scenario_id: string; spec_path: string; definition: string }> {
  const byCase = new Map([...specCases(spec)].map((c) => [c.case_id, c]));
  for (const { id, scenario } of scenarioCases(spec)) {
    for (const [t, turn] of scenario.turns.entries()) {
      for (const [e, expectation] of (turn.expect ?? []).entries()) yield withDefinition(`${id} turns[${t}].expect[${e}]`, expectation);
    }
    for (const [e, expectation] of (scenario.expect ?? []).entries()) yield withDefinition(`${id} expect[${e}]`, expectation);
    for (const metric of scenario.metrics ?? []) yield withDefinition(`${id} metric ${metric.id}`, { criteria: metric.criteria, scope: metric.scope });
  }
  for (const probe of spec.security ?? []) {
    const { repeat: _repeat, description: _description, ...checked } = probe;
    yield withDefinition(`${probe.id} probe`, checked);
  }
  function withDefinition(caseId: string, checked: unknown) {
    const c = byCase.get(caseId)!;
    return { case_id: caseId, kind: c.kind, scenario_id: c.scenario_id, spec_path: c.spec_path, definition: contentAddress(checked) };
  }
}

/**
 * The base branch's `.assure/` is the policy a pull request is judged by. What the head removes or
 * relaxes in it are policy changes: the change under review must not switch off its own gate, so
 * they need an approval. Additions and tightenings are not changes of this kind.
 */
export interface PolicyChange {
  /** `changed`: a check whose definition changed, which may or may not be weaker — a person says. */
  kind: "removed" | "loosened" | "changed";
  /** Where, in the base's terms: `.assure/config.yml: forks`, or `<spec name>: <spec path>`. */
  where: string;
  message: string;
}

/** A branch's `.assure/`: its config, and its specs by name. */
export interface Policy {
  config: AssureConfig | null;
  specs: ReadonlyMap<string, TestSpecDocument>;
}

export function policyChanges(base: Policy, head: Policy): PolicyChange[] {
  const changes: PolicyChange[] = [];
  const add = (kind: PolicyChange["kind"], where: string, message: string) => changes.push({ kind, where, message });
  if (base.config) compareConfigs(base.config, head.config, add);
  for (const [name, baseSpec] of base.specs) {
    const headSpec = head.specs.get(name);
    if (!headSpec) add("removed", name, `the spec '${name}' is removed`);
    else compareSpecs(name, baseSpec, headSpec, add);
  }
  return changes;
}

type Add = (kind: PolicyChange["kind"], where: string, message: string) => void;

const CONFIG = ".assure/config.yml";
/** How much a fork's pull request is gated: `run` runs its agent without anyone looking first. */
const FORKS_STRICTNESS = { run: 0, skip: 1, approve: 2 } as const;

function compareConfigs(base: AssureConfig, head: AssureConfig | null, add: Add): void {
  if (!head) {
    add("removed", CONFIG, "the config is removed: no spec would run");
    return;
  }
  if (head.project !== base.project) add("loosened", `${CONFIG}: project`, `the project changes from '${base.project}' to '${head.project}' (other environments and waivers)`);
  if (FORKS_STRICTNESS[head.forks] < FORKS_STRICTNESS[base.forks]) add("loosened", `${CONFIG}: forks`, `forks changes from '${base.forks}' to '${head.forks}'`);
  const pairs = (config: AssureConfig) => new Set(config.runs.flatMap((entry) => entry.specs.flatMap((spec) => entry.environments.map((environment) => `${spec} in ${environment}`))));
  const headPairs = pairs(head);
  for (const pair of pairs(base)) if (!headPairs.has(pair)) add("removed", `${CONFIG}: runs`, `'${pair}' no longer runs`);
}

function compareSpecs(name: string, base: TestSpecDocument, head: TestSpecDocument, add: Add): void {
  const at = (path: string) => `${name}: ${path}`;
  const headScenarios = new Map((head.scenarios ?? []).map((scenario) => [scenario.id, scenario]));
  const removedScenarios = new Set<string>();
  (base.scenarios ?? []).forEach((scenario, s) => {
    const other = headScenarios.get(scenario.id);
    if (!other) {
      removedScenarios.add(scenario.id);
      add("removed", at(`scenarios[${s}]`), `the scenario '${scenario.id}' is removed`);
      return;
    }
    compareRepeat(at(`scenarios[${s}].repeat`), scenario.repeat ?? base.defaults?.repeat ?? 1, other.repeat ?? head.defaults?.repeat ?? 1, add);
    compareMetrics(at(`scenarios[${s}]`), scenario, other, add);
  });

  const headProbes = new Map((head.security ?? []).map((probe) => [probe.id, probe]));
  (base.security ?? []).forEach((probe, p) => {
    const other = headProbes.get(probe.id);
    if (!other) add("removed", at(`security[${p}]`), `the security probe '${probe.id}' is removed`);
    else compareRepeat(at(`security[${p}].repeat`), probe.repeat ?? 1, other.repeat ?? 1, add);
  });

  // A table's rows removed from a scenario that is still there.
  const headRows = new Set([...scenarioCases(head)].map((c) => c.id));
  const removedRows = new Set<string>();
  for (const c of scenarioCases(base)) {
    const scenario = base.scenarios![c.index]!;
    if (c.row === undefined || removedScenarios.has(scenario.id) || headRows.has(c.id)) continue;
    removedRows.add(c.id);
    add("removed", at(`scenarios[${c.index}].vars`), `the row '${c.id}' of the scenario's table is removed`);
  }

  // Checks removed or changed where their scenario (row) or probe is still there. Metrics are
  // compared without their threshold (above), probes without their repeats.
  const headChecks = new Map([...checksOf(head)].map((c) => [c.case_id, c.definition]));
  for (const c of checksOf(base)) {
    if (removedRows.has(c.scenario_id) || removedScenarios.has(c.scenario_id.replace(/\[.*$/, ""))) continue;
    const other = headChecks.get(c.case_id);
    if (other === undefined) {
      if (c.kind === "expectation") add("removed", at(c.spec_path), `the check '${c.case_id}' is removed`);
    } else if (other !== c.definition) {
      add("changed", at(c.spec_path), `the check '${c.case_id}' is changed: approve it if it is not weaker`);
    }
  }

  const baseBudget = base.defaults?.budget;
  const headBudget = head.defaults?.budget;
  if (baseBudget?.max_tokens !== undefined && (headBudget?.max_tokens === undefined || headBudget.max_tokens > baseBudget.max_tokens)) {
    add("loosened", at("defaults.budget.max_tokens"), `the token budget changes from ${baseBudget.max_tokens} to ${headBudget?.max_tokens ?? "none"}`);
  }
  if (baseBudget?.max_cost_usd !== undefined && (headBudget?.max_cost_usd === undefined || headBudget.max_cost_usd > baseBudget.max_cost_usd)) {
    add("loosened", at("defaults.budget.max_cost_usd"), `the cost budget changes from $${baseBudget.max_cost_usd} to ${headBudget?.max_cost_usd !== undefined ? `$${headBudget.max_cost_usd}` : "none"}`);
  }

  // Each try again is another chance for a failing case to pass: more of them is looser.
  const retries = (spec: TestSpecDocument) => spec.defaults?.retry_failed ?? 0;
  if (retries(head) > retries(base)) add("loosened", at("defaults.retry_failed"), `failed cases are tried again up to ${retries(head)} time(s), not ${retries(base)}`);

  const headGates = new Map(head.gates.map((gate) => [gate.id, gate]));
  base.gates.forEach((gate, g) => {
    const other = headGates.get(gate.id);
    if (!other) add("removed", at(`gates[${g}]`), `the gate '${gate.id}' is removed`);
    else compareGates(at(`gates[${g}].require`), gate, other, add);
  });
}

function compareRepeat(where: string, base: number, head: number, add: Add): void {
  if (head < base) add("loosened", where, `repeat lowered from ${base} to ${head}`);
}

function compareMetrics(where: string, base: Scenario, head: Scenario, add: Add): void {
  const headMetrics = new Map((head.metrics ?? []).map((metric) => [metric.id, metric]));
  (base.metrics ?? []).forEach((metric, m) => {
    const other = headMetrics.get(metric.id);
    if (!other) add("removed", `${where}.metrics[${m}]`, `the metric '${metric.id}' is removed`);
    else if (other.threshold < metric.threshold) add("loosened", `${where}.metrics[${m}].threshold`, `the threshold of '${metric.id}' lowered from ${metric.threshold} to ${other.threshold}`);
  });
}

function compareGates(where: string, base: GateSpec, head: GateSpec, add: Add): void {
  const b = base.require;
  const h = head.require;
  const requires = (r: GateSpec["require"]) =>
    r.expectations ? "expectations" : r.metric !== undefined ? `metric ${r.metric}` : r.max_finding_severity !== undefined ? "max_finding_severity" : "no_regression only";
  if (requires(b) !== requires(h)) {
    add("loosened", where, `the gate '${base.id}' now requires ${requires(h)} instead of ${requires(b)}`);
    return;
  }
  if (b.min_pass_rate !== undefined && (h.min_pass_rate ?? 0) < b.min_pass_rate) add("loosened", `${where}.min_pass_rate`, `min_pass_rate of '${base.id}' lowered from ${b.min_pass_rate} to ${h.min_pass_rate ?? 0}`);
  if (b.confidence !== undefined && (h.confidence ?? 0) < b.confidence) add("loosened", `${where}.confidence`, `confidence of '${base.id}' lowered from ${b.confidence} to ${h.confidence ?? "none (the observed rate alone)"}`);
  if (b.max_finding_severity !== undefined && h.max_finding_severity !== undefined && SEVERITY_RANK[h.max_finding_severity] > SEVERITY_RANK[b.max_finding_severity]) {
    add("loosened", `${where}.max_finding_severity`, `'${base.id}' now allows findings up to ${h.max_finding_severity} (was ${b.max_finding_severity})`);
  }
  if (b.no_regression && !h.no_regression) add("removed", `${where}.no_regression`, `'${base.id}' no longer compares with the base branch`);
  if (b.no_regression && h.no_regression) {
    if (h.no_regression.max_drop > b.no_regression.max_drop) {
      add("loosened", `${where}.no_regression.max_drop`, `'${base.id}' now lets a case drop by ${h.no_regression.max_drop} (was ${b.no_regression.max_drop})`);
    }
    // A higher confidence asks for more proof before calling a drop a regression: fewer regressions are found.
    if (h.no_regression.confidence > b.no_regression.confidence) {
      add("loosened", `${where}.no_regression.confidence`, `'${base.id}' now needs ${h.no_regression.confidence} confidence to call a drop a regression (was ${b.no_regression.confidence})`);
    }
  }
}
