import { describe, expect, it } from "@jest/globals";
import { GateSpec, TestSpecDocument } from "../../../server/specs/document.js";
import { GATE_REQUIREMENTS, requirementOf } from "../../../server/specs/gate-requirements/index.js";
import type { SpecCase } from "../../../server/specs/evaluation-kinds/index.js";

/** A gate's `require` naming each requirement, and what a policy change calls it: a requirement added is added here. */
const NAMING: Record<string, { require: Record<string, unknown>; described: string }> = {
  expectations: { require: { expectations: "all" }, described: "expectations" },
  metric: { require: { metric: "task_completion", min_pass_rate: 0.9 }, described: "metric task_completion" },
  max_finding_severity: { require: { max_finding_severity: "medium" }, described: "max_finding_severity" },
  coverage: { require: { coverage: "owasp-llm-2025" }, described: "coverage owasp-llm-2025" },
};

const gate = (require: object) => GateSpec.safeParse({ id: "G", require });
const messages = (require: object) => gate(require).error?.issues.map((issue) => issue.message) ?? [];
const NAMES = GATE_REQUIREMENTS.map((r) => r.name);

describe("gate requirements", () => {
  it("are each named here", () => {
    expect(Object.keys(NAMING)).toEqual(NAMES);
  });

  it("make the spec format's `require`: their fields in the registry's order, then no_regression", () => {
    expect(Object.keys(GateSpec.shape.require.shape)).toEqual([
      ...GATE_REQUIREMENTS.flatMap((r) => Object.keys(r.fields)),
      "no_regression",
    ]);
    for (const requirement of GATE_REQUIREMENTS) expect(Object.keys(requirement.fields)[0]).toBe(requirement.name);
  });

  describe.each(Object.keys(NAMING))("%s", (name) => {
    const { require, described } = NAMING[name]!;

    it("is a gate's requirement alone, or beside no_regression", () => {
      expect(gate(require).success).toBe(true);
      expect(gate({ ...require, no_regression: {} }).success).toBe(true);
      expect(requirementOf(require)?.name).toBe(name);
      expect(requirementOf(require)?.describe(require)).toBe(described);
    });

    it("is refused beside another requirement, the error naming them all", () => {
      const other = NAMES.find((n) => n !== name)!;
      expect(messages({ ...NAMING[other]!.require, ...require })).toEqual([
        "require one of: expectations, metric (with min_pass_rate), max_finding_severity, coverage — and/or no_regression",
      ]);
    });

    it("keeps its other fields beside it", () => {
      const { [name]: _named, ...rest } = require;
      const others = Object.keys(requirementOf(require)!.fields).filter((field) => field !== name);
      const other = NAMES.find((n) => n !== name)!;
      expect(messages({ ...NAMING[other]!.require, ...rest })).toEqual(
        Object.keys(rest).length > 0 ? [`${others.join(" and ")} go with ${name}`] : [],
      );
    });

    it("covers some kind of case, and not a run-wide one", () => {
      const covers = requirementOf(require)!.covers(require);
      const cases: SpecCase[] = (["expectation", "metric", "probe"] as const).map((kind) => ({
        case_id: `s ${kind}`,
        kind,
        scenario_id: "s",
        metric_id: kind === "metric" ? "task_completion" : null,
        spec_path: "scenarios[0]",
        version: "sha256:0",
      }));
      expect(cases.filter(covers)).toHaveLength(1);
    });
  });

  it("with none, no_regression alone covers every case", () => {
    expect(gate({ no_regression: {} }).success).toBe(true);
    expect(requirementOf({ no_regression: {} })).toBeUndefined();
    expect(messages({})).toEqual([
      "require one of: expectations, metric (with min_pass_rate), max_finding_severity, coverage — and/or no_regression",
    ]);
  });

  it("metric: needs min_pass_rate, and a metric some scenario defines", () => {
    expect(gate({ metric: "task_completion" }).error?.issues).toEqual([
      expect.objectContaining({ path: ["require", "min_pass_rate"], message: "a metric gate needs min_pass_rate" }),
    ]);
    const spec = TestSpecDocument.safeParse({
      schema_version: "1",
      name: "s",
      scenarios: [
        { id: "a", turns: [{ user: "hi" }], metrics: [{ id: "polite", threshold: 0.5, criteria: "Polite" }] },
      ],
      gates: [{ id: "G", require: NAMING.metric!.require }],
    });
    expect(spec.error?.issues).toEqual([
      expect.objectContaining({
        path: ["gates", 0, "require", "metric"],
        message: "metric 'task_completion' is not defined by any scenario",
      }),
    ]);
  });

  it("may not take the ids a release decision gives its own rows", () => {
    for (const id of ["policy", "run", "executor"]) {
      const spec = TestSpecDocument.safeParse({
        schema_version: "1",
        name: "s",
        scenarios: [{ id: "a", turns: [{ user: "hi" }], expect: [{ tool_not_called: "x" }] }],
        gates: [{ id, require: { expectations: "all" } }],
      });
      expect(spec.error?.issues.filter((issue) => issue.path.join(".") === "gates.0.id")).toEqual([
        expect.objectContaining({
          message: expect.stringContaining(`the gate id '${id}' is a release decision's own`),
        }),
      ]);
    }
  });
});
