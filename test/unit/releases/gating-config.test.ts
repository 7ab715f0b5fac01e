import { describe, expect, it } from "@jest/globals";
import { LocalAssureConfig, NO_PROJECT_MESSAGE, readGatingConfig } from "../../../server/releases/gating-config.js";

const config = (lines: string[]) => Buffer.from(`${lines.join("\n")}\n`);
const RUNS = ["runs:", "  - specs: [.assure/specs/*.yaml]", "    environments: [staging]"];

describe(".assure/config.yml without a project", () => {
  it("is valid for local runs (assure test, assure validate)", () => {
    expect(
      LocalAssureConfig.safeParse({ version: 1, runs: [{ specs: [".assure/a.yaml"], environments: ["e"] }] }).success,
    ).toBe(true);
  });

  it("is refused where a commit is gated (the App), saying that it only serves local runs", () => {
    const read = readGatingConfig(config(["version: 1", ...RUNS]));
    expect(read).toEqual({ ok: false, problems: [{ path: "project", message: NO_PROJECT_MESSAGE, line: 1 }] });
    expect(NO_PROJECT_MESSAGE).toMatch(/local runs \(assure test\) only/);
  });

  it("reads a config that names its project as before, and reports its other problems as before", () => {
    const read = readGatingConfig(config(["version: 1", "project: prj_1", ...RUNS]));
    expect(read.ok && read.value.project).toBe("prj_1");
    const bad = readGatingConfig(config(["version: 2", ...RUNS]));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems.map((p) => p.path)).toEqual(expect.arrayContaining(["version", "project"]));
  });
});
