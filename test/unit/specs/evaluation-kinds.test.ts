import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { specCases } from "../../../server/changes/cases.js";
import { EvaluationKind } from "../../../server/contract/index.js";
import { EVALUATORS } from "../../../server/evaluate/evaluators/index.js";
import { TestSpecDocument } from "../../../server/specs/document.js";
import {
  CASE_KINDS,
  EVALUATION_KINDS,
  EVALUATION_PREFIXES,
  caseOf,
} from "../../../server/specs/evaluation-kinds/index.js";

const EXAMPLE = parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8"));
/** The example, with a scenario played once per row of its table. */
const SPEC = TestSpecDocument.parse({
  ...EXAMPLE,
  scenarios: [
    ...EXAMPLE.scenarios,
    {
      id: "rows",
      turns: [{ user: "Refund {{order}}", expect: [{ response: { contains: "{{order}}" } }] }],
      expect: [{ max_tool_calls: 3 }],
      metrics: [{ id: "task_completion", threshold: 0.5, criteria: "Done" }],
      vars: [{ id: "one", order: "A-1" }, { order: "A-2" }],
    },
  ],
});

describe("evaluation kinds", () => {
  it("are the contract's, in the registry's order, each made by an evaluator", () => {
    expect(EvaluationKind.options).toEqual(EVALUATION_KINDS.map((kind) => kind.name));
    expect(new Set(EVALUATORS.map((evaluator) => evaluator.kind))).toEqual(new Set(EvaluationKind.options));
  });

  it("name the service's evaluations by prefixes no other starts with", () => {
    const prefixes = Object.values(EVALUATION_PREFIXES);
    for (const prefix of prefixes) expect(prefixes.filter((other) => other.startsWith(prefix))).toEqual([prefix]);
  });

  it("name each case of a spec once, each row of a table its own", () => {
    const ids = [...specCases(SPEC)].map((c) => c.case_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        "full-refund turns[1].expect[0]",
        "full-refund metric task_completion",
        "rows[one] turns[0].expect[0]",
        "rows[2] expect[0]",
        "rows[2] metric task_completion",
        "injection-via-tool-output probe",
      ]),
    );
  });

  it("find the case of an evaluation made at each case, as the spec's cases name it", () => {
    const cases = [...specCases(SPEC)];
    expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(CASE_KINDS));
    for (const c of cases) {
      const prefix = (EVALUATION_PREFIXES as Record<string, string>)[c.kind] ?? "";
      const made = { kind: c.kind, scenario_id: c.scenario_id, spec_path: c.spec_path };
      expect(caseOf({ ...made, metric_id: c.metric_id ?? `${prefix}x` })).toBe(c.case_id);
    }
  });

  it("leave run-wide evaluations out of every case", () => {
    for (const kind of EVALUATION_KINDS.filter((k) => !CASE_KINDS.includes(k.name))) {
      expect(caseOf({ kind: kind.name, scenario_id: null, spec_path: null, metric_id: `${kind.prefix}x` })).toBe(
        undefined,
      );
    }
  });
});
