import { describe, expect, it } from "@jest/globals";
import { readJsonBody, readYamlBody, tablesOf } from "../../../server/spec-reader/read-spec.js";

describe("reading a spec sent to the API", () => {
  it("names the path and line in the YAML text of what the schema refuses", () => {
    const read = readYamlBody(
      Buffer.from(
        'schema_version: "1"\nname: x\nscenarios:\n  - id: s\n    turns: 3\ngates: [{ id: DET, require: { expectations: all } }]\n',
      ),
      null,
    );
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.details).toContainEqual({
      path: "spec.scenarios[0].turns",
      message: expect.stringMatching(/ \(line 5\)$/),
    });
  });

  it("refuses a string that is not well-formed Unicode, by its path and line", () => {
    const read = readYamlBody(
      Buffer.from('schema_version: "1"\nname: x\nscenarios:\n  - id: s\n    turns:\n      - user: "hi \\ud800"\n'),
      null,
    );
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.details).toEqual([
      { path: "scenarios[0].turns[0].user", message: expect.stringMatching(/lone surrogate.*\(line 6\)$/) },
    ]);
  });

  it("names every failing field of a JSON body, unknown fields included, as the routes do", async () => {
    const read = await readJsonBody(
      JSON.stringify({
        spec: {
          schema_version: "1",
          name: "x",
          scenarios: [{ id: "s", turns: [{ user: "hi" }] }],
          gates: [{ id: "DET", require: { expectations: "all" } }],
          extra: 1,
        },
        more: true,
      }),
    );
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.details).toEqual(
      expect.arrayContaining([
        { path: "body.more", message: "unknown field: more" },
        { path: "body.spec.extra", message: "unknown field: extra" },
      ]),
    );
  });

  it("versions a valid YAML spec by its content, or by the file's blob when it says where it came from", () => {
    const text = Buffer.from(
      'schema_version: "1"\nname: x\nscenarios:\n  - id: s\n    turns: [{ user: hi, expect: [{ response: { matches: "." } }] }]\ngates: [{ id: DET, require: { expectations: all } }]\n',
    );
    const plain = readYamlBody(text, null);
    const fromRepository = readYamlBody(text, {
      repository: "acme/x",
      commit_sha: "a".repeat(40),
      path: ".assure/specs/x.yaml",
    });
    expect(plain).toMatchObject({
      ok: true,
      version: { name: "x", spec_version: expect.stringMatching(/^sha256:/), source_format: "yaml", source: null },
    });
    expect(fromRepository).toMatchObject({
      ok: true,
      version: { spec_version: expect.stringMatching(/^git:[0-9a-f]{40}$/), source: { path: ".assure/specs/x.yaml" } },
    });
    expect((plain as { version: { source_lines: Record<string, number> } }).version.source_lines).toMatchObject({
      "scenarios[0]": 4,
    });
  });

  it("lists the tables a spec file reads", () => {
    expect(
      tablesOf(
        Buffer.from(
          "scenarios:\n  - vars_file: .assure/a.csv\n  - vars_file: .assure/a.csv\n  - vars_file: ../x.csv\n  - id: s\n",
        ),
      ),
    ).toEqual([".assure/a.csv"]);
  });
});
