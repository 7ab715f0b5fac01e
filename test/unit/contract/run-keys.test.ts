import { createHash } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { runIdempotencyKey, type RunKeyInput } from "../../../server/contract/index.js";

const base: RunKeyInput = {
  repositoryId: 7,
  commitSha: "c".repeat(40),
  specPath: ".assure/specs/a.yaml",
  environmentName: "staging",
  attempt: 1,
};

describe("runIdempotencyKey", () => {
  it("is gh1- and the SHA-256 of the fields, the same wherever it is derived", () => {
    const expected = createHash("sha256")
      .update(JSON.stringify([7, "c".repeat(40), ".assure/specs/a.yaml", "staging", 1, null]))
      .digest("hex");
    expect(runIdempotencyKey(base)).toBe(`gh1-${expected}`);
    expect(runIdempotencyKey({ ...base })).toBe(runIdempotencyKey(base));
  });

  it("changes with every field", () => {
    const variants: RunKeyInput[] = [
      { ...base, repositoryId: 8 },
      { ...base, commitSha: "d".repeat(40) },
      { ...base, specPath: ".assure/specs/b.yaml" },
      { ...base, environmentName: "prod" },
      { ...base, attempt: 2 },
      { ...base, agentUrl: "https://pr-12.preview.acme.dev/v1" },
    ];
    const keys = new Set([base, ...variants].map(runIdempotencyKey));
    expect(keys.size).toBe(variants.length + 1);
    for (const key of keys) expect(key).toMatch(/^gh1-[0-9a-f]{64}$/); // a valid Idempotency-Key
  });
});
