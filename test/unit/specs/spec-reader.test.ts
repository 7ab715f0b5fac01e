import { afterAll, describe, expect, it } from "@jest/globals";
import { startSpecReader } from "../../../server/spec-reader/spec-reader.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";

describe("the spec reader's threads", () => {
  const reader = startSpecReader({ threads: 2 });
  afterAll(() => reader.close());

  it("reads many specs at once, of every kind, on new threads (the script loads once per thread, whatever is asked first)", async () => {
    const yaml = Buffer.from(deterministicSpecYaml());
    const where = { repository: "acme/x", commit_sha: "a".repeat(40), path: ".assure/specs/x.yaml" };
    const reads = await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        reader.readYamlBody(yaml, null),
        reader.readJsonBody(JSON.stringify({ spec: { bad: i } })),
        reader.readRepositoryFile(where, yaml, () => undefined),
      ]).flat(),
    );
    expect(reads.map((read) => read.ok)).toEqual(Array.from({ length: 8 }, () => [true, false, true]).flat());
  });
});
