import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { specCases } from "../../../server/changes/cases.js";
import { measureFlakiness } from "../../../server/changes/flakiness.js";
import { withFlakiness } from "../../../server/changes/judge-change.js";
import { TestSpecDocument } from "../../../server/specs/document.js";
import { refundChecks } from "../../helpers/case-evaluations.js";

const EXAMPLE = TestSpecDocument.parse(
  parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8")),
);
const REFUND = "full-refund turns[1].expect[0]";
const VERSIONS = new Map([...specCases(EXAMPLE)].map((c) => [c.case_id, c.version]));
const SETTINGS = { threshold: 0.2, mode: "report" } as const;

/** A run of the example spec whose refund check passed on `passes` of its repeats and failed on the rest. */
const run = (passes: number, fails = 0, spec = EXAMPLE) => ({ spec, evaluations: refundChecks(passes, fails) });

describe("flakiness measured over the base branch's history", () => {
  it("calls a case flaky when it flips between consecutive decisions more often than the threshold, with its history", () => {
    // A run passes a case when every repeat does: 4/5 is a failure of that run.
    const flaky = measureFlakiness([run(5), run(4, 1), run(5), null, run(3, 2), run(5)], VERSIONS, SETTINGS);
    expect(flaky.get(REFUND)).toEqual({ flip_rate: 1, flips: 4, pairs: 4, history: "PFP·FP", quarantined: false });
    expect([...flaky.keys()]).toEqual([REFUND]); // the cases never judged in these runs say nothing
    expect(
      measureFlakiness([run(5), run(0, 5), run(5)], VERSIONS, { threshold: 0.2, mode: "quarantine" }).get(REFUND)
        ?.quarantined,
    ).toBe(true);
  });

  it("does not call a step flaky: one flip is a case that broke (or was fixed), and a steady case is not", () => {
    expect(measureFlakiness([run(5), run(5), run(0, 5)], VERSIONS, SETTINGS).size).toBe(0);
    expect(measureFlakiness([run(5), run(5), run(5), run(5)], VERSIONS, SETTINGS).size).toBe(0);
    expect(measureFlakiness([], VERSIONS, SETTINGS).size).toBe(0);
  });

  it("compares at or under the threshold as steady: 2 flips over 10 pairs is 0.2, not above it", () => {
    const history = [run(5), run(0, 5), run(5), ...Array.from({ length: 8 }, () => run(5))];
    expect(measureFlakiness(history, VERSIONS, SETTINGS).size).toBe(0);
    expect(measureFlakiness(history, VERSIONS, { threshold: 0.19, mode: "report" }).get(REFUND)).toMatchObject({
      flips: 2,
      pairs: 10,
      flip_rate: 0.2,
    });
  });

  it("counts only the head's version of a case: a case whose definition changed starts a new history", () => {
    const edited = structuredClone(EXAMPLE);
    edited.scenarios![0]!.turns[1]!.user = "Refund order 1042, please, all of it";
    const older = (passes: number, fails = 0) => run(passes, fails, edited);
    const flaky = measureFlakiness([older(5), older(0, 5), older(5), run(5), run(5)], VERSIONS, SETTINGS);
    expect(flaky.size).toBe(0);
    const atEdited = measureFlakiness(
      [older(5), older(0, 5), older(5), run(5)],
      new Map([...specCases(edited)].map((c) => [c.case_id, c.version])),
      SETTINGS,
    );
    expect(atEdited.get(REFUND)).toMatchObject({ history: "PFP·", flips: 2, pairs: 2 });
  });
});

describe("a run's failed gates, as flakiness bears on them", () => {
  const flaky = (quarantined: boolean) =>
    new Map([[REFUND, { flip_rate: 1, flips: 3, pairs: 3, history: "FPFP", quarantined }]]);
  const caseOf = (ref: string) => ({ "/e/1": REFUND, "/e/2": REFUND, "/e/3": "no-order expect[0]" })[ref];
  const failed = (refs: string[]) => ({
    gate_id: "DET",
    status: "failed" as const,
    reason: "2 of 9 expectation check(s) failed",
    evidence_refs: refs,
  });

  it("quarantines a gate whose every cited failure is of a quarantined case; it keeps citing them", () => {
    const [gate] = withFlakiness([failed(["/e/1", "/e/2"])], caseOf, flaky(true));
    expect(gate).toMatchObject({ status: "quarantined", evidence_refs: ["/e/1", "/e/2"] });
    expect(gate!.reason).toBe(
      "2 of 9 expectation check(s) failed; quarantined, it does not block: every failure it cites is of a case flaky on the base branch ('full-refund turns[1].expect[0]' flaky: flipped 3 of 3 times on the base branch (FPFP), quarantined)",
    );
  });

  it("keeps a gate failed when one failure is of a steady case, or of evidence it cannot place, labelling the flaky ones", () => {
    const [mixed] = withFlakiness([failed(["/e/1", "/e/3"])], caseOf, flaky(true));
    expect(mixed).toMatchObject({ status: "failed" });
    expect(mixed!.reason).toContain(
      "of the cases it cites, flaky on the base branch: 'full-refund turns[1].expect[0]'",
    );
    expect(withFlakiness([failed(["/e/1", "/findings/9"])], caseOf, flaky(true))[0]!.status).toBe("failed");
  });

  it("only labels in report mode, and leaves passed and inconclusive gates alone", () => {
    const [reported] = withFlakiness([failed(["/e/1"])], caseOf, flaky(false));
    expect(reported).toMatchObject({ status: "failed" });
    expect(reported!.reason).toContain("flaky on the base branch");
    const passed = { gate_id: "DET", status: "passed" as const, reason: "ok", evidence_refs: ["/e/1"] };
    const unsure = { ...passed, status: "inconclusive" as const };
    expect(withFlakiness([passed, unsure], caseOf, flaky(true))).toEqual([passed, unsure]);
  });
});
