import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "yaml";
import { specCases } from "../../../server/changes/cases.js";
import { compareCase } from "../../../server/changes/compare-case.js";
import { TestSpecDocument } from "../../../server/specs/document.js";

const POLICY = { max_drop: 0.05, confidence: 0.95 };
const EXAMPLE = parse(readFileSync(new URL("../../../examples/refund-agent.yaml", import.meta.url), "utf8"));

describe("a case compared with the base branch", () => {
  it("is regressed when it drops beyond max_drop and significantly", () => {
    const change = compareCase({ passes: 10, runs: 10 }, { passes: 3, runs: 10 }, POLICY);
    expect(change.class).toBe("regressed");
    expect(change.rates!.pLower).toBeLessThan(0.05);
    expect(change.rates!.effect).toBeCloseTo(-0.7, 12);
  });

  it("is improved in the mirror case, and unchanged within max_drop", () => {
    expect(compareCase({ passes: 2, runs: 10 }, { passes: 10, runs: 10 }, POLICY).class).toBe("improved");
    expect(compareCase({ passes: 5, runs: 5 }, { passes: 5, runs: 5 }, POLICY).class).toBe("unchanged");
    expect(compareCase({ passes: 20, runs: 20 }, { passes: 20, runs: 21 }, POLICY).class).toBe("unchanged");
  });

  it("is inconclusive for a drop without significance, saying how many more repeats would settle it", () => {
    const change = compareCase({ passes: 5, runs: 5 }, { passes: 3, runs: 5 }, POLICY);
    expect(change.class).toBe("inconclusive");
    expect(change.rates!.pLower).toBeGreaterThan(0.05);
    expect(change.moreRepeatsToSettle).toBeGreaterThan(0);
    // That many more repeats on each side at the same rates would settle it; one fewer would not.
    const more = change.moreRepeatsToSettle!;
    const at = (n: number) =>
      compareCase({ passes: 5 + n, runs: 5 + n }, { passes: Math.round(0.6 * (5 + n)), runs: 5 + n }, POLICY).class;
    expect(at(more)).toBe("regressed");
    expect(at(more - 1)).toBe("inconclusive");
  });

  it("regresses on judged scores that drop significantly though every sample passes", () => {
    const base = { passes: 8, runs: 8, scores: [0.95, 0.9, 0.92, 0.97, 0.91, 0.93, 0.96, 0.94] };
    const head = { passes: 8, runs: 8, scores: [0.8, 0.78, 0.83, 0.79, 0.81, 0.77, 0.82, 0.8] };
    const change = compareCase(base, head, POLICY);
    expect(change.class).toBe("regressed");
    expect(change.scores!.pLower).toBeLessThan(0.05);
    expect(change.scores!.drop).toBeCloseTo(0.935 - 0.8, 12);
  });

  it("is new or removed when it is on one side only", () => {
    expect(compareCase(null, { passes: 1, runs: 1 }, POLICY).class).toBe("new");
    expect(compareCase({ passes: 1, runs: 1 }, null, POLICY).class).toBe("removed");
  });
});

describe("the cases of a spec", () => {
  it("are each check of each scenario (a table's row too) and each probe, versioned by their expanded definition", () => {
    const spec = TestSpecDocument.parse(EXAMPLE);
    const cases = [...specCases(spec)];
    expect(cases.map((c) => c.case_id)).toContain("full-refund turns[1].expect[0]");
    expect(cases.filter((c) => c.kind === "probe").length).toBe(spec.security!.length);
    expect(cases.filter((c) => c.kind === "metric").length).toBeGreaterThan(0);
    expect(new Set(cases.map((c) => c.case_id)).size).toBe(cases.length);
    expect(cases.every((c) => /^sha256:[0-9a-f]{64}$/.test(c.version))).toBe(true);
  });

  it("keep their version when another case or the repeats change, and change it when their own definition does", () => {
    const versions = (edit: (spec: any) => void) => {
      const spec = structuredClone(EXAMPLE);
      edit(spec);
      return new Map([...specCases(TestSpecDocument.parse(spec))].map((c) => [c.case_id, c.version]));
    };
    const before = versions(() => {});
    const otherEdited = versions((s) => {
      s.scenarios[1].turns[0].user = "Refund order Z-998 please.";
      s.defaults.repeat = 7;
    });
    expect(otherEdited.get("full-refund turns[1].expect[0]")).toBe(before.get("full-refund turns[1].expect[0]"));
    expect(otherEdited.get("unknown-order turns[0].expect[0]")).not.toBe(
      before.get("unknown-order turns[0].expect[0]"),
    );
    const ownEdited = versions((s) => (s.scenarios[0].turns[1].expect[0].tool_called.args.amount = 40));
    expect(ownEdited.get("full-refund turns[1].expect[0]")).not.toBe(before.get("full-refund turns[1].expect[0]"));
    expect(ownEdited.get("full-refund turns[0].expect[0]")).toBe(before.get("full-refund turns[0].expect[0]"));
  });
});
