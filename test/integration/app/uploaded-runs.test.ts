import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { pullRequestEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { uploadOf } from "../../helpers/uploads.js";
import { waitFor } from "../../helpers/wait.js";

const REPOSITORY: TestRepository = {
  id: 727272,
  full_name: "acme/uploads",
  default_branch: "main",
  installationId: 4343,
};
let shas = 0;
const nextSha = () => `f${(++shas).toString(16).padStart(39, "0")}`;
let pullNumbers = 200;

describe("the GitHub App and runs executed outside the service", () => {
  let github: GitHubStandIn;
  let t: TestService;
  let agent: ExampleAgent;
  let client: ApiClient;
  let projectId: string;
  let environmentId: string;

  const files = (settings: Record<string, unknown> = {}) => ({
    ".assure/config.yml": stringify({
      version: 1,
      project: projectId,
      runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"], executor: "local" }],
      ...settings,
    }),
    ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
  });
  const decisionOf = async (sha: string) =>
    (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${sha}`)).body.data[0];
  async function openPullRequest(baseFiles: Record<string, string>, headFiles: Record<string, string>) {
    const base = nextSha();
    const head = nextSha();
    github.commit(REPOSITORY.full_name, base, baseFiles, { committed_at: "2026-11-20T10:00:00Z" });
    github.commit(REPOSITORY.full_name, head, headFiles, { parents: [base], committed_at: "2026-11-22T10:00:00Z" });
    const number = ++pullNumbers;
    github.pullRequest(REPOSITORY.full_name, number, { author: "pr-author" });
    expect(
      (await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base, number }))).status,
    ).toBe(200);
    return head;
  }
  /** What `assure test --upload` sends for the commit: conversations held with the agent, for the slot's spec version. */
  async function uploadFor(head: string) {
    const slot = await waitFor(async () => {
      const planned = (await decisionOf(head))?.planned[0];
      return planned?.waiting ? planned : undefined;
    }, "the App's plan to wait for the upload");
    expect(slot).toMatchObject({
      executor: "local",
      run_id: null,
      waiting: { for: expect.stringContaining("uploaded") },
    });
    const held = await client.post(
      "/v1/runs",
      { test_spec_id: slot.test_spec_id, spec_version: slot.spec_version, environment_id: environmentId },
      { headers: { "idempotency-key": `held-${head}` } },
    );
    await waitForRun(client, held.body.run_id);
    const body = {
      ...(await uploadOf(client, held.body.run_id)),
      source: { repository: REPOSITORY.full_name, commit_sha: head },
    };
    const uploaded = await client.post("/v1/runs/uploads", body, { headers: { "idempotency-key": `upload-${head}` } });
    expect(uploaded.status).toBe(201);
    return waitForRun(client, uploaded.body.run_id);
  }
  const completed = (sha: string) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(REPOSITORY.full_name, sha);
        return run?.status === "completed" ? run : undefined;
      },
      `a completed check run on ${sha.slice(0, 7)}`,
      { timeoutMs: 30_000 },
    );

  beforeAll(async () => {
    github = await startGitHubStandIn();
    agent = await startExampleAgent();
    t = await startTestService({
      env: {
        ...github.env,
        ASSURE_BASE_URL: "https://assure.example.test",
        ASSURE_WORKERS: "2",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
      },
    });
    github.addRepository(REPOSITORY);
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "uploads",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "2.0.0" })).body.agent_id;
    environmentId = (
      await client.post("/v1/environments", {
        name: "staging",
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
      })
    ).body.environment_id;
  });
  afterEach(() => expect(github.problems).toEqual([]));
  afterAll(async () => {
    await t?.close();
    await agent?.close();
    await github?.close();
  });

  it("does not let a pull request's head allow its own uploads: the base's policy refuses the run, and the head's change blocks", async () => {
    const head = await openPullRequest(files(), files({ executed_outside_service: "allow" }));
    const run = await uploadFor(head);
    expect(run).toMatchObject({ executor: "local", verdict: "PASS" });
    const checkRun = await completed(head);
    expect(checkRun.conclusion).toBe("failure");
    const decision = await decisionOf(head);
    expect(decision).toMatchObject({ status: "BLOCKED", change_settings: { executed_outside_service: "never" } });
    expect(decision.planned).toEqual([expect.objectContaining({ executor: "local", run_id: run.run_id })]);
    expect(decision.reasons.map((r: { gate_id: string; status: string }) => [r.gate_id, r.status])).toEqual([
      ["policy", "failed"],
      ["executor", "failed"],
    ]);
    expect(decision.policy_changes).toEqual([
      expect.objectContaining({ kind: "loosened", where: ".assure/config.yml: executed_outside_service" }),
    ]);
    expect(checkRun.output.summary).toContain("Executed outside the service (executor: local), uploaded by");
    expect(checkRun.output.summary).toMatch(/\| executor \| failed \| .*executed_outside_service: never/);
  });

  it("counts an uploaded run where the base branch allows it", async () => {
    const allowed = files({ executed_outside_service: "allow" });
    const head = await openPullRequest(allowed, allowed);
    const run = await uploadFor(head);
    const checkRun = await completed(head);
    expect(checkRun.conclusion).toBe("success");
    const decision = await decisionOf(head);
    expect(decision).toMatchObject({ status: "ALLOWED", change_settings: { executed_outside_service: "allow" } });
    expect(decision.runs).toEqual([expect.objectContaining({ run_id: run.run_id, executor: "local", planned: true })]);
    expect(checkRun.output.summary).toContain("Executed outside the service (executor: local)");
  });
});
