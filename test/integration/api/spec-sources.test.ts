import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { deterministicSpecYaml, type SeededProject } from "../../helpers/seed.js";
import { startSeededService } from "../../helpers/seeded-service.js";

const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);

describe("specs from a repository", () => {
  let p: SeededProject;
  let close: () => Promise<void>;
  const upload = (text: string | Buffer, query: string) =>
    p.client.call("POST", `/v1/test-specs?${query}`, { body: text, contentType: "application/yaml" });

  beforeAll(async () => ({ p, close } = await startSeededService()));
  afterAll(() => close());

  it("are versioned by the Git blob SHA of the bytes received, which git hash-object reproduces", async () => {
    const text = `# comments and layout are part of the file's bytes\n${deterministicSpecYaml({ repeat: 1 }).replace("refund-agent-deterministic", "from-git")}`;
    const bytes = Buffer.from(text, "utf8");
    const blob = execFileSync("git", ["hash-object", "--stdin"], { input: bytes, encoding: "utf8" }).trim();
    const created = await upload(bytes, `repository=acme/refunds&commit_sha=${SHA_A}&path=.assure/specs/refund.yaml`);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      spec_version: `git:${blob}`,
      source: { repository: "acme/refunds", commit_sha: SHA_A, path: ".assure/specs/refund.yaml" },
    });

    // The same bytes at a later commit: the same version, nothing added.
    const again = await upload(bytes, `repository=acme/refunds&commit_sha=${SHA_B}&path=.assure/specs/refund.yaml`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ spec_version: `git:${blob}`, version_number: 1, source: { commit_sha: SHA_A } });

    // Without a source, the same document is addressed by its canonical JSON, as before.
    const plain = await upload(bytes, "");
    expect(plain.body.spec_version).toMatch(/^sha256:/);
  });

  it("refuse a source that is incomplete, malformed, or sent with a JSON body", async () => {
    const yaml = deterministicSpecYaml({ repeat: 1 });
    const incomplete = await upload(yaml, `repository=acme/refunds&commit_sha=${SHA_A}`);
    expect(incomplete.status).toBe(400);
    expect(incomplete.body.error.code).toBe("INVALID_PARAMETER_COMBINATION");
    for (const query of [
      `repository=acme/refunds&commit_sha=${SHA_A}&path=../outside.yaml`,
      `repository=acme/refunds&commit_sha=${SHA_A}&path=/absolute.yaml`,
      `repository=acme/refunds&commit_sha=HEAD&path=a.yaml`,
      `repository=not-a-repo&commit_sha=${SHA_A}&path=a.yaml`,
    ]) {
      const refused = await upload(yaml, query);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe("VALIDATION_FAILED");
    }
    const json = await p.client.call("POST", `/v1/test-specs?repository=acme/refunds&commit_sha=${SHA_A}&path=a.yaml`, {
      json: {
        spec: {
          schema_version: "1",
          name: "x",
          scenarios: [{ id: "s", turns: [{ user: "hi" }] }],
          gates: [{ id: "D", require: { expectations: "all" } }],
        },
      },
    });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe("INVALID_PARAMETER_COMBINATION");
    expect(json.body.error.message).toMatch(/application\/yaml/);
  });
});
