import { describe, expect, it } from "@jest/globals";
import { OWASP_LLM_2025 } from "../../../../server/specs/document-shape.js";
import { OWASP_ASI_2026, OWASP_LLM_IDS } from "../../../../server/specs/security-library/taxonomy.js";

describe("the security library's taxonomy", () => {
  it("names each probe category by the id its OWASP LLM 2025 entry has", () => {
    for (const [category, id] of Object.entries(OWASP_LLM_IDS)) {
      expect(OWASP_LLM_2025[category as keyof typeof OWASP_LLM_2025].startsWith(`${id}:2025 `)).toBe(true);
    }
    expect(new Set(Object.values(OWASP_LLM_IDS)).size).toBe(10);
  });

  it("lists the ten OWASP Agentic 2026 entries, ASI01 to ASI10", () => {
    expect(Object.keys(OWASP_ASI_2026)).toEqual(
      Array.from({ length: 10 }, (_, i) => `ASI${String(i + 1).padStart(2, "0")}`),
    );
  });
});
