import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { makeApiClient } from "../../helpers/api-client.js";
import { runCli, spawnService, type ChildService } from "../../helpers/child-service.js";
import { pullRequestEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { deterministicSpecYaml } from "../../helpers/seed.js";
import { waitFor } from "../../helpers/wait.js";

const REPOSITORY: TestRepository = { id: 777, full_name: "acme/crashy", default_branch: "main", installationId: 4242 };
const HEAD = "d".repeat(40);
const BASE = "e".repeat(40);

describe("the release gate across a crash", () => {
  let dir: string;
  let env: Record<string, string>;
  let agent: ExampleAgent;
  let github: GitHubStandIn;
  let service: ChildService | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assure-gate-crash-"));
    github = await startGitHubStandIn();
    agent = await startExampleAgent({ slowMs: 150 });
    env = {
      ASSURE_DB: join(dir, "assure.db"),
      ASSURE_BASE_URL: "https://assure.example.test",
      ASSURE_WORKERS: "2",
      ASSURE_WORKER_LEASE_MS: "2000",
      ASSURE_GITHUB_RECONCILE_MS: "200",
      ...github.env,
    };
    github.addRepository(REPOSITORY);
  });
  afterAll(async () => {
    await service?.kill();
    await agent.close();
    await github.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("still reaches its conclusion when the service is killed during a run and started again", async () => {
    const token = (await runCli(["keys", "create", "--admin"], env)).json().token;
    service = await spawnService(env);
    let client = makeApiClient(service.baseUrl, undefined, token);
    const project = (
      await client.post("/v1/projects", {
        name: "crashy",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    const agentId = (await client.post("/v1/agents", { project_id: project, name: "refund-agent", version: "3" })).body
      .agent_id;
    await client.post("/v1/environments", {
      project_id: project,
      name: "staging",
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent+slow" },
    });
    const files = {
      ".assure/config.yml": stringify({
        version: 1,
        project,
        runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }],
      }),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 2 }),
    };
    github.commit(REPOSITORY.full_name, BASE, files);
    github.commit(REPOSITORY.full_name, HEAD, files);

    expect(
      (await github.deliver(service.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head: HEAD, base: BASE })))
        .status,
    ).toBe(200);
    await waitFor(
      () => github.currentCheckRun(REPOSITORY.full_name, HEAD)?.status === "in_progress",
      "the check run to be in progress",
    );
    await service.kill();

    service = await spawnService(env);
    client = makeApiClient(service.baseUrl, undefined, token);
    const run = await waitFor(
      () => {
        const current = github.currentCheckRun(REPOSITORY.full_name, HEAD);
        return current?.status === "completed" ? current : undefined;
      },
      "the check run to complete after the restart",
      { timeoutMs: 60_000 },
    );
    expect(run.conclusion).toBe("success");
    expect(github.checkRuns(REPOSITORY.full_name, HEAD)).toHaveLength(1); // updated in place, never duplicated
    const decision = (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${HEAD}`))
      .body.data[0];
    expect(decision).toMatchObject({ status: "ALLOWED", decision_id: run.external_id });
    expect(github.problems).toEqual([]);
  });
});
