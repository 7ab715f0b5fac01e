import { describe, expect, it } from "@jest/globals";
import { knownKeysAt, suggestKey, withSuggestion } from "../../../../app/cli/did-you-mean.js";
import { parseSpecPath } from "../../../../server/specs/read-yaml.js";
import { LocalAssureConfig } from "../../../../server/releases/gating-config.js";
import { TestSpecDocument } from "../../../../server/specs/document.js";

describe("did you mean (unknown keys of a spec or config)", () => {
  it("knows the keys at a path through arrays, optional parts and unions of the schema", () => {
    expect(knownKeysAt(TestSpecDocument, ["scenarios", 0, "turns", 1, "expect", 0])).toEqual(
      expect.arrayContaining(["tool_called", "tool_not_called", "response", "latency_ms"]),
    );
    expect(knownKeysAt(TestSpecDocument, [])).toEqual(expect.arrayContaining(["schema_version", "scenarios", "gates"]));
    expect(knownKeysAt(LocalAssureConfig, ["runs", 0])).toEqual(
      expect.arrayContaining(["specs", "environments", "on_deployment"]),
    );
    expect(knownKeysAt(TestSpecDocument, ["nowhere", 3])).toEqual([]);
  });

  it("suggests the nearest known key only when it is near", () => {
    expect(suggestKey("tool_caled", ["tool_called", "tool_not_called"])).toBe("tool_called");
    expect(suggestKey("senarios", ["scenarios", "security"])).toBe("scenarios");
    expect(suggestKey("completely_else", ["scenarios", "gates"])).toBeUndefined();
    expect(suggestKey("x", [])).toBeUndefined();
  });

  it("reads paths as the spec reader writes them, and adds the suggestion to an unknown key's message", () => {
    expect(parseSpecPath("scenarios[12].turns[0].expect")).toEqual(["scenarios", 12, "turns", 0, "expect"]);
    expect(
      withSuggestion(TestSpecDocument, {
        path: "scenarios[0].expect[2].max_tool_cals",
        message: 'Unrecognized key: "max_tool_cals"',
      }),
    ).toBe('Unrecognized key: "max_tool_cals" — did you mean max_tool_calls?');
    expect(withSuggestion(LocalAssureConfig, { path: "chek_name", message: 'Unrecognized key: "chek_name"' })).toBe(
      'Unrecognized key: "chek_name" — did you mean check_name?',
    );
    expect(withSuggestion(TestSpecDocument, { path: "name", message: "Invalid input" })).toBe("Invalid input");
  });
});
