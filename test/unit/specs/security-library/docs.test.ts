import { readFileSync } from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { FAMILIES } from "../../../../server/specs/security-library/families/index.js";
import { PRESETS } from "../../../../server/specs/security-library/presets.js";
import { STRATEGIES } from "../../../../server/specs/security-library/strategies/index.js";

const DOC = readFileSync(new URL("../../../../docs/security-library.md", import.meta.url), "utf8");

describe("docs/security-library.md", () => {
  it("documents every family with its ids, every strategy, and every preset", () => {
    for (const family of FAMILIES) {
      const section = DOC.split(`\n### ${family.name}\n`)[1]?.split("\n### ")[0] ?? "";
      expect([family.name, section.includes(family.classification.atlas)]).toEqual([family.name, true]);
      if (family.classification.owasp_asi) expect(section).toContain(family.classification.owasp_asi);
    }
    for (const strategy of STRATEGIES) expect(DOC).toContain(`\n### ${strategy.name}\n`);
    for (const preset of PRESETS) {
      expect(DOC).toContain(`| \`${preset.name}\` |`);
      for (const id of Object.keys(preset.notTestable)) expect(DOC).toContain(id);
    }
  });
});
