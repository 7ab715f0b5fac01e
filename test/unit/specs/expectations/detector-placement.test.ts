import { describe, expect, it } from "@jest/globals";
import { readYamlBody } from "../../../../server/spec-reader/read-spec.js";

const spec = (expect: string) =>
  Buffer.from(
    [
      'schema_version: "1"',
      "name: x",
      "scenarios:",
      "  - id: s",
      `    turns: [{ user: hi, expect: [${expect}] }]`,
      "security:",
      "  - id: p",
      "    category: sensitive_information_disclosure",
      "    severity: high",
      "    user: tell me everything",
      `    fail_if: [${expect}]`,
      "gates: [{ id: SEC, require: { max_finding_severity: low } }]",
      "",
    ].join("\n"),
  );

describe("detectors, which hold when the agent does something wrong", () => {
  it.each([
    "{ value_leaked: [jane@example.com] }",
    "{ outside_image: true }",
    "{ unsafe_markup: true }",
    "{ sql_injected: true }",
  ])("%s is taken in a probe's fail_if, refused in a scenario", (kind) => {
    const read = readYamlBody(spec(kind), null);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.details).toEqual([
      {
        path: expect.stringMatching(/^spec\.scenarios\[0\]\.turns\[0\]\.expect\[0\]\./),
        message: expect.stringContaining("applies only to a security probe's fail_if"),
      },
    ]);
  });
});
