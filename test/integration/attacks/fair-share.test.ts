import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

/**
 * The adversarial review's finding 6 (issue: "The gate holds"): one project starving the others
 * of the service's workers and conversation slots, and a spec asking for more work than any run
 * should do.
 */
describe("finding 6: one project starves the others", () => {
  let t: TestService;
  let busy: ExampleAgent;
  let other: ExampleAgent;

  beforeAll(async () => {
    t = await startTestService({
      env: { ASSURE_WORKERS: "2", ASSURE_MAX_CONVERSATIONS: "6", ASSURE_MAX_CONVERSATIONS_PER_PROJECT: "3" },
    });
    busy = await startExampleAgent({ latencyMs: 100 });
    other = await startExampleAgent();
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([busy.close(), other.close()]);
  });

  it("runs another project's run while the first keeps its runs queued, and holds no more of a project's conversations than its cap", async () => {
    const heavy = await seedProject(t, busy.baseUrl, {
      specYaml: deterministicSpecYaml({ repeat: 8, concurrency: 6 }),
    });
    const light = await seedProject(t, other.baseUrl, { specYaml: deterministicSpecYaml({ repeat: 1 }) });
    const queued: string[] = [];
    for (let i = 0; i < 4; i++) {
      queued.push(
        (await startRun(heavy.client, { test_spec_id: heavy.testSpecId, environment_id: heavy.environmentId })).run_id,
      );
    }
    await waitFor(
      async () => (await heavy.client.get(`/v1/runs/${queued[0]}`)).body.status === "RUNNING",
      "the heavy project's first run to start",
    );
    const { run_id } = await startRun(light.client, {
      test_spec_id: light.testSpecId,
      environment_id: light.environmentId,
    });
    const done = await waitForRun(light.client, run_id);
    expect(done.verdict).toBe("PASS");
    // With two workers and a cap of one run per project, the heavy project kept the rest waiting.
    const statuses = await Promise.all(
      queued.map(async (id) => (await heavy.client.get(`/v1/runs/${id}`)).body.status as string),
    );
    expect(statuses.filter((status) => status === "QUEUED").length).toBeGreaterThanOrEqual(2);
    expect(busy.peakInFlight).toBeLessThanOrEqual(3);
    expect(busy.peakInFlight).toBeGreaterThan(0);
  });

  it("refuses a spec that could call its agent more than 200,000 times, naming the cap", async () => {
    const p = await seedProject(t, other.baseUrl);
    const spec = parse(deterministicSpecYaml({ repeat: 1000, run_timeout_ms: 86_400_000 })) as {
      defaults: Record<string, number>;
      scenarios: { id: string; turns: unknown[] }[];
    };
    spec.defaults.max_steps = 100;
    spec.scenarios = Array.from({ length: 10 }, (_, i) => ({
      id: `s${i}`,
      turns: Array.from({ length: 100 }, () => ({ user: "Where is order A-100?" })),
    }));
    const refused = await p.client.call("POST", "/v1/test-specs", {
      body: stringify(spec),
      contentType: "application/yaml",
    });
    // Each part within its bounds, the whole over the cap: the spec does not hold together.
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe("SPEC_INCONSISTENT");
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({
        path: "spec.scenarios",
        message: expect.stringMatching(/^the spec may call its agent 100000000 times .*; at most 200000/),
      }),
    ]);
  });
});
