import type { AssureConfig } from "../contract/assure-config.js";
import type { GateSpec, Scenario, TestSpecDocument } from "../specs/document.js";
import { contentAddress } from "../specs/canonical-json.js";
import { reportsRemoval, scenarioChecks, standaloneChecks, type CaseCheck } from "../specs/evaluation-kinds/index.js";
import { requirementOf } from "../specs/gate-requirements/index.js";
import { scenarioCases } from "../specs/scenario-cases.js";

/**
 * Each check of a spec, as written in its scenario (not per row of a table: rows are compared on
 * their own) or as a probe, with what its kind says it checks: a metric without its threshold
 * (compared on its own), a probe without its repeats and description. The conversation a check is
 * made in is compared apart (conversationOf), and so are the tools.
 */
function* checksOf(spec: TestSpecDocument): Generator<CaseCheck> {
  for (const [s, scenario] of (spec.scenarios ?? []).entries()) yield* scenarioChecks(scenario, s, scenario.id);
  yield* standaloneChecks(spec);
}

/**
 * What the agent is put through in a scenario, as written: its system prompt, user turns and
 * limits. The agent's answers to the same checks can differ as soon as any of it does.
 */
const conversationOf = (scenario: Scenario) =>
  contentAddress({
    system: scenario.system ?? null,
    turns: scenario.turns.map((turn) => turn.user),
    max_steps: scenario.max_steps ?? null,
    timeout_ms: scenario.timeout_ms ?? null,
  });

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

/** A branch's `.assure/`: its config, its specs by name, and which spec runs in which environment (against which deployment). */
export interface Policy {
  config: AssureConfig | null;
  specs: ReadonlyMap<string, TestSpecDocument>;
  /** `'<spec name>' in <environment>` → the GitHub environment whose deployment it tests, or null. */
  runs?: ReadonlyMap<string, string | null> | undefined;
}

export function policyChanges(base: Policy, head: Policy): PolicyChange[] {
  const changes: PolicyChange[] = [];
  const add = (kind: PolicyChange["kind"], where: string, message: string) => changes.push({ kind, where, message });
  if (base.config) compareConfigs(base.config, head.config, add);
  // A spec moved to a file another entry runs elsewhere runs elsewhere, whatever the globs say.
  for (const [run, deployment] of base.runs ?? []) {
    if (!head.runs) break;
    if (!head.runs.has(run)) add("removed", CONFIG, `${run} no longer runs`);
    else if (head.runs.get(run) !== deployment) {
      add(
        "changed",
        CONFIG,
        `${run} tests ${head.runs.get(run) ? `the deployment of '${head.runs.get(run)}'` : "the environment's own agent"} instead of ${deployment ? `the deployment of '${deployment}'` : "the environment's own agent"}`,
      );
    }
  }
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
  if (head.project !== base.project) {
    add(
      "loosened",
      `${CONFIG}: project`,
      `the project changes from '${base.project}' to '${head.project}' (other environments and waivers)`,
    );
  }
  if (FORKS_STRICTNESS[head.forks] < FORKS_STRICTNESS[base.forks]) {
    add("loosened", `${CONFIG}: forks`, `forks changes from '${base.forks}' to '${head.forks}'`);
  }
  // Each spec glob in each environment, with the deployment whose agent it tests and who executes it.
  const pairs = (config: AssureConfig) =>
    new Map(
      config.runs.flatMap((entry) =>
        entry.specs.flatMap((spec) =>
          entry.environments.map(
            (environment) =>
              [
                `${spec} in ${environment}`,
                { deployment: entry.on_deployment ?? null, executor: entry.executor },
              ] as const,
          ),
        ),
      ),
    );
  const headPairs = new Map([...pairs(head)].map(([pair, { deployment }]) => [pair, deployment]));
  // Every head entry executed outside the service that the base does not execute so, each time it is
  // written: a glob is matched against files (a new, narrower glob above the base's takes its files),
  // so a pair counts as new unless the base has the very same one local.
  const baseLocal = new Set<string>(
    [...pairs(base)].filter(([, { executor }]) => executor === "local").map(([pair]) => pair),
  );
  for (const entry of head.runs.filter((run) => run.executor === "local")) {
    for (const spec of entry.specs) {
      for (const environment of entry.environments) {
        const pair = `${spec} in ${environment}`;
        if (!baseLocal.has(pair)) {
          add("loosened", `${CONFIG}: runs`, `'${pair}' would be executed outside the service and uploaded`);
        }
      }
    }
  }
  for (const [pair, { deployment }] of pairs(base)) {
    if (!headPairs.has(pair)) add("removed", `${CONFIG}: runs`, `'${pair}' no longer runs`);
    else if (headPairs.get(pair) !== deployment) {
      add(
        "changed",
        `${CONFIG}: runs`,
        `'${pair}' tests ${headPairs.get(pair) ? `the deployment of '${headPairs.get(pair)}'` : "the environment's own agent"} instead of ${deployment ? `the deployment of '${deployment}'` : "the environment's own agent"}`,
      );
    }
  }
  compareSettings(base, head, add);
}

/** How the base branch judges a change: what the head sets here applies to every pull request once it is merged. */
function compareSettings(base: AssureConfig, head: AssureConfig, add: Add): void {
  if (base.policy_changes === "require_approval" && head.policy_changes === "report") {
    add(
      "loosened",
      `${CONFIG}: policy_changes`,
      "policy changes would no longer need an approval (require_approval → report)",
    );
  }
  if (base.executed_outside_service === "never" && head.executed_outside_service === "allow") {
    add(
      "loosened",
      `${CONFIG}: executed_outside_service`,
      "runs executed outside the service and uploaded would count toward decisions (never → allow)",
    );
  }
  if (base.flaky.mode === "report" && head.flaky.mode === "quarantine") {
    add("loosened", `${CONFIG}: flaky.mode`, "flaky cases would no longer block (report → quarantine)");
  }
  if (head.flaky.mode === "quarantine" && head.flaky.threshold < base.flaky.threshold) {
    add(
      "loosened",
      `${CONFIG}: flaky.threshold`,
      `more cases would count as flaky and be quarantined (threshold ${base.flaky.threshold} → ${head.flaky.threshold})`,
    );
  }
  if (head.baseline.depth !== base.baseline.depth || head.baseline.max_age_days !== base.baseline.max_age_days) {
    add(
      "changed",
      `${CONFIG}: baseline`,
      `where a baseline is looked for changes (depth ${base.baseline.depth} → ${head.baseline.depth}, max_age_days ${base.baseline.max_age_days} → ${head.baseline.max_age_days})`,
    );
  }
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
    if (conversationOf(other) !== conversationOf(scenario)) {
      add(
        "changed",
        at(`scenarios[${s}]`),
        `the conversation of '${scenario.id}' is changed (its system prompt, user turns or limits): approve it if it tests the same`,
      );
    }
    compareRepeat(
      at(`scenarios[${s}].repeat`),
      scenario.repeat ?? base.defaults?.repeat ?? 1,
      other.repeat ?? head.defaults?.repeat ?? 1,
      add,
    );
    compareMetrics(at(`scenarios[${s}]`), scenario, other, add);
  });

  const headProbes = new Map((head.security ?? []).map((probe) => [probe.id, probe]));
  (base.security ?? []).forEach((probe, p) => {
    const other = headProbes.get(probe.id);
    if (!other) add("removed", at(`security[${p}]`), `the security probe '${probe.id}' is removed`);
    else compareRepeat(at(`security[${p}].repeat`), probe.repeat ?? 1, other.repeat ?? 1, add);
  });

  // The tools the agent is given and what their mocks answer: the same checks can pass on other answers.
  const headTools = new Map((head.tools ?? []).map((tool) => [tool.name, tool]));
  (base.tools ?? []).forEach((tool, i) => {
    const other = headTools.get(tool.name);
    if (!other) add("removed", at(`tools[${i}]`), `the tool '${tool.name}' is removed`);
    else if (contentAddress(other) !== contentAddress(tool)) {
      add(
        "changed",
        at(`tools[${i}]`),
        `the tool '${tool.name}' is changed (its description, parameters or mocks): approve it if it tests the same`,
      );
    }
  });
  for (const limit of ["max_steps", "timeout_ms"] as const) {
    const [was, now] = [base.defaults?.[limit], head.defaults?.[limit]];
    if (was !== now) {
      add(
        "changed",
        at(`defaults.${limit}`),
        `defaults.${limit} changes from ${was ?? "its default"} to ${now ?? "its default"}`,
      );
    }
  }

  // A table's rows removed from, or changed in, a scenario that is still there.
  const headRows = new Map([...scenarioCases(head)].map((c) => [c.id, c.row]));
  for (const c of scenarioCases(base)) {
    const scenario = base.scenarios![c.index]!;
    if (c.row === undefined || removedScenarios.has(scenario.id)) continue;
    const other = headRows.get(c.id);
    if (other === undefined) {
      add("removed", at(`scenarios[${c.index}].vars`), `the row '${c.id}' of the scenario's table is removed`);
    } else if (contentAddress(other) !== contentAddress(c.row)) {
      add(
        "changed",
        at(`scenarios[${c.index}].vars`),
        `the row '${c.id}' of the scenario's table is changed: approve it if it tests the same`,
      );
    }
  }

  // Checks removed or changed where their scenario or probe is still there. Metrics are compared
  // without their threshold (above), probes without their repeats.
  const headChecks = new Map([...checksOf(head)].map((c) => [c.case_id, contentAddress(c.definition)]));
  for (const c of checksOf(base)) {
    if (removedScenarios.has(c.scenario_id)) continue;
    const other = headChecks.get(c.case_id);
    if (other === undefined) {
      if (reportsRemoval(c.kind)) add("removed", at(c.spec_path), `the check '${c.case_id}' is removed`);
    } else if (other !== contentAddress(c.definition)) {
      add("changed", at(c.spec_path), `the check '${c.case_id}' is changed: approve it if it is not weaker`);
    }
  }

  compareGateCounts(at, base, head, add);

  const baseBudget = base.defaults?.budget;
  const headBudget = head.defaults?.budget;
  if (
    baseBudget?.max_tokens !== undefined &&
    (headBudget?.max_tokens === undefined || headBudget.max_tokens > baseBudget.max_tokens)
  ) {
    add(
      "loosened",
      at("defaults.budget.max_tokens"),
      `the token budget changes from ${baseBudget.max_tokens} to ${headBudget?.max_tokens ?? "none"}`,
    );
  }
  if (
    baseBudget?.max_cost_usd !== undefined &&
    (headBudget?.max_cost_usd === undefined || headBudget.max_cost_usd > baseBudget.max_cost_usd)
  ) {
    add(
      "loosened",
      at("defaults.budget.max_cost_usd"),
      `the cost budget changes from $${baseBudget.max_cost_usd} to ${headBudget?.max_cost_usd !== undefined ? `$${headBudget.max_cost_usd}` : "none"}`,
    );
  }

  // Each try again is another chance for a failing case to pass: more of them is looser.
  const retries = (spec: TestSpecDocument) => spec.defaults?.retry_failed ?? 0;
  if (retries(head) > retries(base)) {
    add(
      "loosened",
      at("defaults.retry_failed"),
      `failed cases are tried again up to ${retries(head)} time(s), not ${retries(base)}`,
    );
  }

  const headGates = new Map(head.gates.map((gate) => [gate.id, gate]));
  base.gates.forEach((gate, g) => {
    const other = headGates.get(gate.id);
    if (!other) add("removed", at(`gates[${g}]`), `the gate '${gate.id}' is removed`);
    else compareGates(at(`gates[${g}].require`), gate, other, add);
  });
}

/**
 * What the head changes elsewhere in its spec that changes what a base gate counts: more samples of
 * a gated metric can carry a failing one over the bar without the agent changing.
 */
function compareGateCounts(
  at: (path: string) => string,
  base: TestSpecDocument,
  head: TestSpecDocument,
  add: Add,
): void {
  base.gates.forEach((gate, g) => {
    for (const { field, message } of requirementOf(gate.require)?.recounted?.(gate.require, gate.id, base, head) ??
      []) {
      add("changed", at(`gates[${g}].require.${field}`), message);
    }
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
    else if (other.threshold < metric.threshold) {
      add(
        "loosened",
        `${where}.metrics[${m}].threshold`,
        `the threshold of '${metric.id}' lowered from ${metric.threshold} to ${other.threshold}`,
      );
    }
  });
}

function compareGates(where: string, base: GateSpec, head: GateSpec, add: Add): void {
  const b = base.require;
  const h = head.require;
  const requirement = requirementOf(b);
  const requires = (r: GateSpec["require"]) => requirementOf(r)?.describe(r) ?? "no_regression only";
  if (requires(b) !== requires(h)) {
    add("loosened", where, `the gate '${base.id}' now requires ${requires(h)} instead of ${requires(b)}`);
    return;
  }
  for (const { field, message } of requirement?.loosened?.(b, h, base.id) ?? []) {
    add("loosened", `${where}.${field}`, message);
  }
  if (b.no_regression && !h.no_regression) {
    add("removed", `${where}.no_regression`, `'${base.id}' no longer compares with the base branch`);
  }
  if (b.no_regression && h.no_regression) {
    if (h.no_regression.max_drop > b.no_regression.max_drop) {
      add(
        "loosened",
        `${where}.no_regression.max_drop`,
        `'${base.id}' now lets a case drop by ${h.no_regression.max_drop} (was ${b.no_regression.max_drop})`,
      );
    }
    // A higher confidence asks for more proof before calling a drop a regression: fewer regressions are found.
    if (h.no_regression.confidence > b.no_regression.confidence) {
      add(
        "loosened",
        `${where}.no_regression.confidence`,
        `'${base.id}' now needs ${h.no_regression.confidence} confidence to call a drop a regression (was ${b.no_regression.confidence})`,
      );
    }
  }
}
