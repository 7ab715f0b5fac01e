import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import {
  deploymentStatusEvent,
  pullRequestEvent,
  pushEvent,
  type TestRepository,
} from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn, type StandInCheckRun } from "../../../examples/github/stand-in.js";
import { startAgentEndpoint, type AgentEndpoint } from "../../helpers/agent-endpoint.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import type { ApiClient } from "../../helpers/api-client.js";

const PUBLIC_BASE_URL = "https://assure.example.test";
const REPOSITORY: TestRepository = {
  id: 434343,
  full_name: "acme/previews",
  default_branch: "main",
  installationId: 5150,
};
const BASE_SHA = "a".repeat(40);
const SECRET = "Bearer preview-agent-key";
const MINUTE = 60_000;
let shas = 0;
/** The 1-based line of a file that holds `text`. */
const lineOf = (file: string, text: string) => file.split("\n").findIndex((line) => line.includes(text)) + 1;
const nextSha = () => `f${(++shas).toString(16).padStart(39, "0")}`;

type RunsEntry = { specs: string[]; environments: string[]; on_deployment?: string; deployment_timeout?: string };

describe("each commit tests its own agent", () => {
  let github: GitHubStandIn;
  let agent: ExampleAgent;
  let stranger: ExampleAgent;
  let notYet: AgentEndpoint;
  let clock: FakeClock;
  let t: TestService;
  let client: ApiClient;
  let projectId: string;
  let prNumber = 100;
  const origin = () => agent.baseUrl.replace(/\/v1$/, "");

  beforeAll(async () => {
    github = await startGitHubStandIn();
    agent = await startExampleAgent();
    stranger = await startExampleAgent();
    notYet = await startAgentEndpoint();
    notYet.setHealthy(false);
    clock = new FakeClock();
    t = await startTestService({
      clock,
      env: {
        ...github.env,
        ASSURE_BASE_URL: PUBLIC_BASE_URL,
        ASSURE_WORKERS: "4",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
        ASSURE_GITHUB_WAIT_RETRY_MS: String(MINUTE),
      },
    });
    github.addRepository(REPOSITORY);
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "previews",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "3.0.0" })).body.agent_id;
    const environments = {
      "per-commit": { base_url: `${origin()}/{sha}/v1` },
      "per-pr": { base_url: `${origin()}/pr-{pull_request}/v1` },
      preview: { base_url: `${origin()}/main/v1`, url_pattern: `${origin()}/*/v1` },
      "not-yet": { base_url: notYet.baseUrl },
    };
    for (const [name, endpoint] of Object.entries(environments)) {
      const created = await client.post("/v1/environments", {
        name,
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", headers: { authorization: SECRET }, ...endpoint },
      });
      expect(created.status).toBe(201);
    }
    github.commit(
      REPOSITORY.full_name,
      BASE_SHA,
      files([{ specs: [".assure/specs/*.yaml"], environments: ["per-commit"] }]),
    );
  });
  afterEach(() => expect(github.problems).toEqual([]));
  afterAll(async () => {
    await t.close();
    await Promise.all([agent.close(), stranger.close(), notYet.close(), github.close()]);
  });

  function files(runs: RunsEntry[]) {
    return {
      ".assure/config.yml": stringify({ version: 1, project: projectId, runs }),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    };
  }
  async function openPullRequest(runs: RunsEntry[]) {
    const head = nextSha();
    const number = ++prNumber;
    github.commit(REPOSITORY.full_name, head, files(runs));
    expect(
      (await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base: BASE_SHA, number })))
        .status,
    ).toBe(200);
    return { head, number };
  }
  const checkRun = (head: string, done: (run: StandInCheckRun) => boolean, what: string) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(REPOSITORY.full_name, head);
        return run && done(run) ? run : undefined;
      },
      what,
      { timeoutMs: 30_000 },
    );
  const completed = (head: string) =>
    checkRun(head, (run) => run.status === "completed", `a completed check run on ${head.slice(0, 7)}`);
  const decisionOf = async (head: string) =>
    (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${head}`)).body.data[0];
  const chatCallsUnder = (server: ExampleAgent, prefix: string) =>
    server.calls.filter((call) => call.path === `${prefix}/v1/chat/completions`);

  it("calls each commit's own agent when the environment's URL is a {sha} template", async () => {
    const first = await openPullRequest([{ specs: [".assure/specs/*.yaml"], environments: ["per-commit"] }]);
    const second = await openPullRequest([{ specs: [".assure/specs/*.yaml"], environments: ["per-commit"] }]);
    for (const { head } of [first, second]) {
      expect((await completed(head)).conclusion).toBe("success");
      const calls = chatCallsUnder(agent, `/${head}`);
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((call) => call.authorization === SECRET)).toBe(true);
      const [run] = (await decisionOf(head)).runs;
      expect((await client.get(`/v1/runs/${run.run_id}`)).body).toMatchObject({
        agent_url: `${origin()}/${head}/v1`,
        agent_version: head,
      });
    }
  });

  it("calls the pull request's agent with a {pull_request} template; a push, which has no pull request, fails saying so", async () => {
    const { head, number } = await openPullRequest([{ specs: [".assure/specs/*.yaml"], environments: ["per-pr"] }]);
    expect((await completed(head)).conclusion).toBe("success");
    expect(chatCallsUnder(agent, `/pr-${number}`).length).toBeGreaterThan(0);

    const pushed = nextSha();
    const config = files([{ specs: [".assure/specs/*.yaml"], environments: ["per-pr"] }]);
    github.commit(REPOSITORY.full_name, pushed, config);
    await github.deliver(t.baseUrl, "push", pushEvent(REPOSITORY, { after: pushed }));
    const run = await completed(pushed);
    expect(run.conclusion).toBe("failure");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".assure/config.yml",
        start_line: lineOf(config[".assure/config.yml"], "- per-pr"),
        message: expect.stringContaining("(source.pull_request: needed to fill {pull_request})"),
      }),
    ]);
  });

  it("waits for the commit's deployment, then tests the agent at the deployment's URL", async () => {
    const callsBefore = agent.calls.length;
    const { head } = await openPullRequest([
      { specs: [".assure/specs/*.yaml"], environments: ["preview"], on_deployment: "pr-preview" },
    ]);
    const waiting = await checkRun(
      head,
      (run) => (run.output.summary ?? "").includes("waiting for a successful deployment of 'pr-preview'"),
      "a check run that waits for the deployment",
    );
    expect(waiting).toMatchObject({ status: "queued", conclusion: null });
    expect((await decisionOf(head)).planned[0].waiting).toEqual({
      for: "a successful deployment of 'pr-preview' of this commit",
      until: new Date(clock.now().getTime() + 30 * MINUTE).toISOString(),
    });
    expect(agent.calls.slice(callsBefore)).toEqual([]);

    // A deployment still in progress has no URL to test yet.
    await github.deliver(
      t.baseUrl,
      "deployment_status",
      deploymentStatusEvent(REPOSITORY, { head, environment: "pr-preview", state: "in_progress" }),
    );
    await github.deliver(
      t.baseUrl,
      "deployment_status",
      deploymentStatusEvent(REPOSITORY, {
        head,
        environment: "pr-preview",
        url: `${origin()}/deploy-${head.slice(0, 7)}/v1`,
        deploymentId: 2,
      }),
    );
    expect((await completed(head)).conclusion).toBe("success");
    const calls = chatCallsUnder(agent, `/deploy-${head.slice(0, 7)}`);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.authorization === SECRET)).toBe(true);
    expect(github.checkRuns(REPOSITORY.full_name, head)).toHaveLength(1);
  });

  it("fails the check run of a deployment outside the environment's url_pattern, and sends it no credentials", async () => {
    const { head } = await openPullRequest([
      { specs: [".assure/specs/*.yaml"], environments: ["preview"], on_deployment: "pr-preview" },
    ]);
    await checkRun(head, (run) => run.status === "queued", "a queued check run");
    await github.deliver(
      t.baseUrl,
      "deployment_status",
      deploymentStatusEvent(REPOSITORY, { head, environment: "pr-preview", url: stranger.baseUrl, deploymentId: 3 }),
    );
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".assure/config.yml",
        start_line: lineOf(github.file(REPOSITORY.full_name, head, ".assure/config.yml"), "on_deployment:"),
        message: expect.stringMatching(
          new RegExp(
            `deployment of 'pr-preview' at ${stranger.baseUrl} may not be tested in 'preview'.*Allowed: ${origin()}/\\*/v1`,
          ),
        ),
      }),
    ]);
    expect(stranger.calls).toEqual([]);
  });

  it("gives up when no deployment comes before the deadline: action_required, saying so", async () => {
    const { head } = await openPullRequest([
      {
        specs: [".assure/specs/*.yaml"],
        environments: ["preview"],
        on_deployment: "pr-preview",
        deployment_timeout: "10m",
      },
    ]);
    await checkRun(head, (run) => run.status === "queued", "a queued check run");
    clock.advance(9 * MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(github.currentCheckRun(REPOSITORY.full_name, head)!.status).toBe("queued");
    clock.advance(MINUTE);
    const run = await completed(head);
    expect(run.conclusion).toBe("action_required");
    expect(run.output.title).toBe("Release blocked: 1 run never started (waited in vain)");
    expect(run.output.summary).toContain("gave up waiting for a successful deployment of 'pr-preview' of this commit");
    expect((await decisionOf(head)).status).toBe("BLOCKED");
  });

  it("waits for an agent that is not ready yet, trying again, and gives up at the deadline", async () => {
    const { head } = await openPullRequest([
      { specs: [".assure/specs/*.yaml"], environments: ["not-yet"], deployment_timeout: "5m" },
    ]);
    const waiting = await checkRun(
      head,
      (run) => (run.output.summary ?? "").includes("waiting for its agent to be ready"),
      "a check run that waits for the agent",
    );
    expect(waiting.output.summary).toContain("answered HTTP 503");
    const probes = () => notYet.requests.filter((request) => request.url === "/v1/models").length;
    const before = probes();
    clock.advance(MINUTE);
    await waitFor(() => probes() > before, "the App to try the agent again");
    clock.advance(4 * MINUTE);
    const run = await completed(head);
    expect(run.conclusion).toBe("action_required");
    expect(run.output.summary).toContain("gave up waiting for its agent to be ready");
    expect((await decisionOf(head)).runs).toEqual([]);
  });
});
