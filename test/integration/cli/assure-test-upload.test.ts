import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { ROOT, runAssure } from "../../helpers/assure-cli.js";
import { waitForRun } from "../../helpers/runs.js";
import { deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const SPEC = "examples/refund-agent-deterministic.yaml";
const SHA = "c".repeat(40);

describe("assure test --upload: runs held here, judged by the service", () => {
  let agent: ExampleAgent;
  let t: TestService;
  let p: SeededProject;
  let specVersion: string;

  beforeAll(async () => {
    agent = await startExampleAgent();
    t = await startTestService({ env: { ASSURE_WORKERS: "2" } });
    p = await seedProject(t, agent.baseUrl, { specYaml: deterministicSpecYaml() });
    // The spec file as the App or the Action stores it at a commit: versioned by its Git blob, as assure test versions it.
    const stored = await p.client.call(
      "POST",
      `/v1/test-specs?repository=acme/refunds&commit_sha=${SHA}&path=${encodeURIComponent(SPEC)}`,
      { body: readFileSync(join(ROOT, SPEC), "utf8"), contentType: "application/yaml" },
    );
    expect(stored.status).toBe(201);
    specVersion = stored.body.spec_version;
  });
  afterAll(async () => {
    await t?.close();
    await agent?.close();
  });

  const assure = (args: string[], env: Record<string, string> = { ASSURE_TOKEN: p.token }) =>
    runAssure(["test", SPEC, "--agent", agent.baseUrl, ...args], { env });

  it("sends each run's conversations and trace; the service stores it as executed locally and judges it itself", async () => {
    const result = await assure([
      "--upload",
      t.baseUrl,
      "--environment",
      "staging",
      "--repository",
      "acme/refunds",
      "--commit",
      SHA,
    ]);
    expect(result.stderr).not.toMatch(/not uploaded|Error/);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Release allowed/);
    const line =
      /refund-agent-deterministic: (http\S+\/v1\/runs\/(run_\w+)) \(executor: local; the service judges it\)/.exec(
        result.stdout,
      );
    expect(line).not.toBeNull();
    const run = await waitForRun(p.client, line![2]!);
    expect(run).toMatchObject({
      status: "COMPLETED",
      verdict: "PASS",
      executor: "local",
      spec_version: specVersion,
      environment_id: p.environmentId,
      source: { repository: "acme/refunds", commit_sha: SHA },
      uploaded_by: expect.any(String),
    });
    const evaluations = (await p.client.get(`/v1/runs/${run.run_id}/evaluations?limit=200`)).body.data;
    expect(evaluations.length).toBeGreaterThan(0);
    expect(evaluations.every((e: { status: string }) => e.status === "passed")).toBe(true);
  });

  it("says why an upload was refused, and exits 2", async () => {
    const result = await assure(["--upload", t.baseUrl, "--environment", "production"]);
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/the service has no environment 'production'/);
    const other = await assure(["--upload", t.baseUrl, "--environment", "staging"], {
      ASSURE_TOKEN: await t.issueKey(p.projectId, ["specs:read", "environments:read"]),
    });
    expect(other.status).toBe(2);
    expect(other.stdout).toMatch(/not uploaded: POST \/v1\/runs\/uploads: 403 INSUFFICIENT_SCOPE/);
  });

  it("needs ASSURE_TOKEN and --environment with --upload", async () => {
    const noToken = await assure(["--upload", t.baseUrl, "--environment", "staging"], {});
    expect(noToken.status).toBe(64);
    expect(noToken.stderr).toMatch(/ASSURE_TOKEN/);
    const noEnvironment = await assure(["--upload", t.baseUrl]);
    expect(noEnvironment.status).toBe(64);
    expect(noEnvironment.stderr).toMatch(/--environment/);
    const halfSource = await assure(["--upload", t.baseUrl, "--environment", "staging", "--commit", SHA]);
    expect(halfSource.status).toBe(64);
    expect(halfSource.stderr).toMatch(/--repository and --commit go together/);
    const stray = await assure(["--environment", "staging"]);
    expect(stray.status).toBe(64);
    expect(stray.stderr).toMatch(/--environment goes with --upload/);
  });
});
