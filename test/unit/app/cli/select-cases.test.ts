import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "@jest/globals";
import { loadLocalSpec, type LocalSpec } from "../../../../app/cli/local-spec.js";
import { selectCases } from "../../../../app/cli/test/select-cases.js";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

describe("what of a spec assure test runs (--scenario, --repeat, --concurrency)", () => {
  let spec: LocalSpec;
  beforeAll(async () => {
    const read = await loadLocalSpec(ROOT, `${ROOT}examples/refund-agent.yaml`);
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    spec = read.spec;
  });

  it("runs the spec as it is, versioned by its file, when nothing is asked", () => {
    const selected = selectCases(spec, { scenarios: [] });
    expect(selected).toMatchObject({ kind: "selected", droppedGates: [], version: spec.version });
    expect(spec.version.spec_version).toMatch(/^git:[0-9a-f]{40}$/);
    expect(spec.path).toBe("examples/refund-agent.yaml");
  });

  it("keeps the scenarios whose id matches, leaves out the gates that judged only the others, and keeps each part's line", () => {
    const selected = selectCases(spec, { scenarios: ["unknown-*"] });
    if (selected.kind !== "selected") throw new Error(selected.kind);
    expect(selected.document.scenarios?.map((s) => s.id)).toEqual(["unknown-order"]);
    expect(selected.document.security).toBeUndefined();
    expect(selected.document.gates.map((g) => g.id)).toEqual(["DET", "SEC"]);
    expect(selected.droppedGates).toEqual(["TASK"]);
    // The kept scenario is now scenarios[0]; its parts keep their lines in the file.
    expect(selected.lines["scenarios[0]"]).toBe(spec.lines["scenarios[1]"]);
    expect(selected.lines["scenarios[0].turns[0].expect[0]"]).toBe(76);
    expect(selected.lines["gates[1]"]).toBe(spec.lines["gates[2]"]);
    expect(selected.version.source_lines).toEqual(selected.lines);
    expect(selected.version.spec_version).toMatch(/^sha256:/);
  });

  it("matches probes by their ids too", () => {
    const selected = selectCases(spec, { scenarios: ["injection-*"] });
    if (selected.kind !== "selected") throw new Error(selected.kind);
    expect(selected.document.scenarios).toBeUndefined();
    expect(selected.document.security?.map((p) => p.id)).toEqual(["injection-via-tool-output"]);
    expect(selected.lines["security[0]"]).toBe(spec.lines["security[0]"]);
  });

  it("plays every scenario and probe --repeat times, at --concurrency", () => {
    const selected = selectCases(spec, { scenarios: [], repeat: 5, concurrency: 2 });
    if (selected.kind !== "selected") throw new Error(selected.kind);
    expect(selected.document.scenarios?.map((s) => s.repeat)).toEqual([5, 5]);
    expect(selected.document.security?.every((p) => p.repeat === 5)).toBe(true);
    expect(selected.document.defaults).toMatchObject({ repeat: 5, concurrency: 2 });
    expect(selected.lines).toEqual(spec.lines);
  });

  it("says when nothing matches, and when what is left would decide nothing or ask too much", () => {
    expect(selectCases(spec, { scenarios: ["no-such-*"] })).toEqual({ kind: "none" });
    const onlyTask = {
      ...spec,
      document: { ...spec.document, gates: spec.document.gates.filter((g) => g.id === "TASK") },
    };
    expect(selectCases(onlyTask, { scenarios: ["unknown-order"] })).toEqual({
      kind: "invalid",
      message: "every gate judges something the selection left out: nothing would decide the release",
    });
    const crowded = {
      ...spec,
      document: {
        ...spec.document,
        scenarios: Array.from({ length: 11 }, (_, i) => ({ ...spec.document.scenarios![1]!, id: `case-${i}` })),
      },
    };
    expect(selectCases(crowded, { scenarios: [], repeat: 1000 })).toMatchObject({
      kind: "invalid",
      message: expect.stringMatching(/^scenarios: the spec asks for 13000 conversations/),
    });
  });
});
