import { describe, expect, it } from "@jest/globals";
import type { Evaluation } from "../../../server/contract/index.js";
import type { DecisionReport, RunReport } from "../../../server/releases/report/report.js";
import { specAnnotations } from "../../../server/releases/report/spec-annotations.js";

const absolute = (ref: string) => `https://assure.example.test${ref}`;
const evaluation = (id: string, reason: string, spec_path = "scenarios[0].turns[0].expect[0]") =>
  ({
    evaluation_id: id,
    metric_id: "expectation",
    status: "failed",
    reason,
    spec_path,
    evidence_refs: [`/v1/runs/run_1/trace/${id.slice(-1)}`],
  }) as unknown as Evaluation;

function report(unmet: Evaluation[]): DecisionReport {
  const run = {
    specPath: ".assure/specs/refunds.yaml",
    environmentName: "staging",
    lines: { "scenarios[0].turns[0].expect[0]": 12, "scenarios[1].turns[0].expect[0]": 30 },
    unmet,
    findings: [],
    evidence: { run_id: "run_1", gates: [] },
  } as unknown as RunReport;
  return { decision: { status: "BLOCKED" }, runs: [run] } as unknown as DecisionReport;
}

describe("annotations on the spec", () => {
  it("are one per check and line, however many repeats failed it, with each repeat's evidence", () => {
    const repeats = ["ev_1", "ev_2", "ev_3"].map((id) => evaluation(id, "refund_order was not called"));
    const other = evaluation("ev_4", "said 'guaranteed'", "scenarios[1].turns[0].expect[0]");
    const annotations = specAnnotations(report([...repeats, other]), absolute);
    expect(annotations).toHaveLength(2);
    const [merged, single] = annotations;
    expect(merged).toMatchObject({ line: 12, level: "failure" });
    expect(merged!.message.split("\n")).toEqual([
      "In 3 conversations: refund_order was not called",
      ...["1", "2", "3"].map(
        (n) => `Evidence: ${absolute(`/v1/runs/run_1/evaluations/ev_${n}`)} ${absolute(`/v1/runs/run_1/trace/${n}`)}`,
      ),
    ]);
    expect(single).toMatchObject({ line: 30, message: expect.stringMatching(/^said 'guaranteed'\nEvidence: /) });
  });

  it("cite the first five repeats and count the rest", () => {
    const repeats = Array.from({ length: 8 }, (_, i) => evaluation(`ev_${i}`, "too slow"));
    const [annotation] = specAnnotations(report(repeats), absolute);
    const lines = annotation!.message.split("\n");
    expect(lines[0]).toBe("In 8 conversations: too slow");
    expect(lines.filter((line) => line.startsWith("Evidence: "))).toHaveLength(5);
    expect(lines.at(-1)).toBe("… and 3 more");
  });
});
