import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { checkRunEvent, pullRequestEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn, type StandInCheckRun } from "../../../examples/github/stand-in.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import type { ApiClient } from "../../helpers/api-client.js";

const REPOSITORY: TestRepository = {
  id: 515253,
  full_name: "acme/open-refunds",
  default_branch: "main",
  installationId: 6060,
};
const FORK = { id: 989898, full_name: "stranger/open-refunds" };
let shas = 0;
const nextSha = (prefix: string) => `${prefix}${(++shas).toString(16).padStart(39, "0")}`;

describe("pull requests from forks", () => {
  let github: GitHubStandIn;
  let agent: ExampleAgent;
  let t: TestService;
  let client: ApiClient;
  let projectId: string;
  let prNumber = 200;

  beforeAll(async () => {
    github = await startGitHubStandIn();
    agent = await startExampleAgent();
    t = await startTestService({
      env: {
        ...github.env,
        // The App's key in base64, as Probot accepts it: every check run here is published with it.
        PRIVATE_KEY: Buffer.from(github.privateKey).toString("base64"),
        ASSURE_BASE_URL: "https://assure.example.test",
        ASSURE_WORKERS: "4",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
      },
    });
    github.addRepository(REPOSITORY);
    github.setPermission(REPOSITORY.full_name, "reader", "read");
    github.setPermission(REPOSITORY.full_name, "maintainer", "write");
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "open-refunds",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "1.0.0" })).body.agent_id;
    await client.post("/v1/environments", {
      name: "staging",
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl },
    });
  });
  afterEach(() => expect(github.problems).toEqual([]));
  afterAll(async () => {
    await t.close();
    await agent.close();
    await github.close();
  });

  const files = (forks?: string) => ({
    ".assure/config.yml": stringify({
      version: 1,
      project: projectId,
      ...(forks ? { forks } : {}),
      runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }],
    }),
    ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
  });
  /** A fork's pull request against a base whose config sets `forks`; the fork's head is reachable only by its pull ref. */
  async function openForkPullRequest(forks?: string) {
    const base = nextSha("b");
    const head = nextSha("f");
    const number = ++prNumber;
    github.commit(REPOSITORY.full_name, base, files(forks));
    github.commit(REPOSITORY.full_name, `refs/pull/${number}/head`, files("run")); // the fork cannot loosen the base's policy
    expect(
      (
        await github.deliver(
          t.baseUrl,
          "pull_request",
          pullRequestEvent(REPOSITORY, { head, base, number, fork: FORK }),
        )
      ).status,
    ).toBe(200);
    return head;
  }
  const current = (head: string, done: (run: StandInCheckRun) => boolean, what: string) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(REPOSITORY.full_name, head);
        return run && done(run) ? run : undefined;
      },
      what,
      { timeoutMs: 30_000 },
    );
  const press = (head: string, sender: string) =>
    github.deliver(
      t.baseUrl,
      "check_run",
      checkRunEvent(REPOSITORY, {
        action: "requested_action",
        name: "assure/release-gate",
        head,
        identifier: "approve",
        sender,
      }),
    );
  const decisionsOf = async (head: string) =>
    (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${head}`)).body.data;

  it("waits for a maintainer: a reader's press starts nothing and says so; a writer's starts the runs, and who approved is shown", async () => {
    const requestsBefore = agent.requests;
    const head = await openForkPullRequest();
    const waiting = await current(head, (run) => run.status === "completed", "the check run that waits for approval");
    expect(waiting).toMatchObject({
      conclusion: "action_required",
      output: { title: "Waiting for a maintainer to approve a fork's runs" },
    });
    expect(waiting.actions.map((action) => action.identifier)).toEqual(["approve"]);
    expect(await decisionsOf(head)).toEqual([]);

    await press(head, "reader");
    const refused = await current(
      head,
      (run) => (run.output.summary ?? "").includes("@reader"),
      "the check run saying the reader's press was refused",
    );
    expect(refused.conclusion).toBe("action_required");
    expect(refused.output.summary).toMatch(
      /@reader pressed \*Approve and run\* at .*, but has read access: nothing was started/,
    );
    expect(await decisionsOf(head)).toEqual([]);
    expect(agent.requests).toBe(requestsBefore);

    await press(head, "maintainer");
    const approved = await current(
      head,
      (run) => run.status === "completed" && run.conclusion === "success",
      "the fork's runs to pass",
    );
    expect(approved.output.summary).toMatch(/approved by @maintainer \(write access\)/);
    const [decision] = await decisionsOf(head);
    expect(decision.status).toBe("ALLOWED");
    expect(agent.requests).toBeGreaterThan(requestsBefore);
    // Its spec was read at the fork's head, through the base repository's pull ref.
    const run = (await client.get(`/v1/runs/${decision.runs[0].run_id}`)).body;
    expect(run.source).toMatchObject({ commit_sha: head, pull_request: prNumber });
  });

  it("skips a fork's pull request when the base says forks: skip, saying so", async () => {
    const head = await openForkPullRequest("skip");
    const run = await current(head, (r) => r.status === "completed", "the skipped check run");
    expect(run).toMatchObject({
      conclusion: "action_required",
      output: { title: "Skipped: pull requests from forks are not tested" },
    });
    expect(run.actions).toEqual([]);
    expect(await decisionsOf(head)).toEqual([]);
    // Pressing a button the check run does not offer changes nothing.
    await press(head, "maintainer");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(github.currentCheckRun(REPOSITORY.full_name, head)!.output.title).toBe(
      "Skipped: pull requests from forks are not tested",
    );
    expect(await decisionsOf(head)).toEqual([]);
  });

  it("runs a fork's pull request at once when the base says forks: run", async () => {
    const head = await openForkPullRequest("run");
    expect((await current(head, (r) => r.status === "completed", "the fork's check run")).conclusion).toBe("success");
  });
});
