import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { TOOLS, refundSpec } from "../../unit/specs/security-library/refund-spec.js";

describe("security library entries in a spec sent to the API", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;

  beforeAll(async () => {
    t = await startTestService();
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  it("expand at upload: the stored spec holds the probes and their coverage, and reads back the same", async () => {
    const spec = refundSpec([{ preset: "owasp-llm-2025" }, { preset: "owasp-agentic-2026" }], { name: "library-api" });
    const created = await p.client.post("/v1/test-specs", { project_id: p.projectId, spec });
    expect(created.status).toBe(201);
    const probes = created.body.spec.security as { id: string; library: { entry: string } }[];
    expect(probes.length).toBeGreaterThanOrEqual(180);
    expect(created.body.spec.security_coverage.map((c: { entry: string }) => c.entry)).toEqual([
      "preset:owasp-llm-2025",
      "preset:owasp-agentic-2026",
    ]);

    const read = await p.client.get(`/v1/test-specs/${created.body.test_spec_id}`);
    expect(read.body.spec).toEqual(created.body.spec);
    expect(read.body.spec_version).toBe(created.body.spec_version);

    // The same document again is the same version; the stored spec sent back is a spec of its own, as valid.
    const again = await p.client.post("/v1/test-specs", { project_id: p.projectId, spec });
    expect(again.body.spec_version).toBe(created.body.spec_version);
    const storedBack = await p.client.post("/v1/test-specs", { project_id: p.projectId, spec: read.body.spec });
    expect(storedBack.body.spec.security).toEqual(probes);
  });

  it("refuse an entry aimed at a tool the spec does not have, at its path", async () => {
    const spec = refundSpec([{ family: "tool-misuse", tools: ["nope"] }], { name: "library-refused", tools: TOOLS });
    const refused = await p.client.post("/v1/test-specs", { project_id: p.projectId, spec });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("SPEC_INCONSISTENT");
    expect(refused.body.error.details).toEqual([
      { path: "body.spec.security[0].tools[0]", message: "tool 'nope' is not defined under tools" },
    ]);
  });
});
