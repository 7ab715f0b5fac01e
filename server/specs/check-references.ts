import type { z } from "zod";
import { WHOLE_DOCUMENT } from "./whole-document.js";
import { argumentsOf } from "./expectations/index.js";
import { checkTable, checkTemplatedMocks, type Path } from "./check-tables.js";
import { requirementOf } from "./gate-requirements/index.js";
import { BUDGET_GATE_ID, DECISION_GATE_IDS, type Expectation, type TestSpecDocument } from "./document-shape.js";
import { MAX_AGENT_CALLS_PER_SPEC, MAX_CONVERSATIONS_PER_SPEC, countAgentCalls, countConversations } from "./vars.js";

/** Checks that need the whole document: unique ids and references that must resolve. */
export function checkReferences(doc: TestSpecDocument, ctx: z.RefinementCtx): void {
  const problem = (path: Path, message: string) =>
    ctx.addIssue({ code: "custom", path, message, params: WHOLE_DOCUMENT });
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
  const checkExpectations = (list: Expectation[] | undefined, path: Path, canaryAllowed: boolean, inProbe = true) => {
    (list ?? []).forEach((entry, i) => {
      const found = argumentsOf(entry);
      if (!found) return; // already reported by the entry's own schema
      const { kind, args } = found;
      const at: Path = [...path, i, kind.name];
      for (const tool of kind.namesTools?.(args) ?? []) checkTool(tool.name, [...at, ...tool.path]);
      if (kind.needsCanary && !canaryAllowed) {
        problem(at, `${kind.name} applies only to a security probe with canary: true`);
      } else if (kind.detects && !inProbe) {
        problem(
          at,
          `${kind.name} holds when the agent does something wrong: it applies only to a security probe's fail_if`,
        );
      }
    });
  };

  const ids = new Map<string, string>();
  const claimId = (id: string, path: Path) => {
    const owner = ids.get(id);
    if (owner) problem(path, `id '${id}' is already used by ${owner}`);
    else ids.set(id, path.slice(0, 2).join("[") + "]");
  };
  scenarios.forEach((scenario, s) => {
    claimId(scenario.id, ["scenarios", s, "id"]);
    scenario.turns.forEach((turn, t) =>
      checkExpectations(turn.expect, ["scenarios", s, "turns", t, "expect"], false, false),
    );
    checkExpectations(scenario.expect, ["scenarios", s, "expect"], false, false);
    const own = new Set<string>();
    (scenario.metrics ?? []).forEach((metric, m) => {
      if (own.has(metric.id)) {
        problem(["scenarios", s, "metrics", m, "id"], `duplicate metric '${metric.id}' in this scenario`);
      }
      own.add(metric.id);
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
    (probe.plant ?? []).forEach((plant, i) => checkTool(plant.tool, ["security", p, "plant", i, "tool"]));
    checkExpectations(probe.fail_if, ["security", p, "fail_if"], probe.canary === true);
  });

  const gates = new Set<string>();
  doc.gates.forEach((gate, g) => {
    if (gates.has(gate.id)) problem(["gates", g, "id"], `duplicate gate id '${gate.id}'`);
    if (gate.id === BUDGET_GATE_ID && doc.defaults?.budget) {
      problem(["gates", g, "id"], `the gate id '${BUDGET_GATE_ID}' is the one defaults.budget adds`);
    }
    if (Object.hasOwn(DECISION_GATE_IDS, gate.id)) {
      problem(
        ["gates", g, "id"],
        `the gate id '${gate.id}' is a release decision's own (${DECISION_GATE_IDS[gate.id]})`,
      );
    }
    gates.add(gate.id);
    requirementOf(gate.require)?.checkReferences?.(gate.require, doc, (path, message) =>
      problem(["gates", g, "require", ...path], message),
    );
  });
}
