import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { pullRequestEvent, type TestRepository } from "../../../examples/github/events.js";
import { startOidcIssuer, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { runAction, type ActionRun } from "../../helpers/action-runner.js";
import { unusedBaseUrl } from "../../helpers/agent-endpoint.js";
import { makeGitRepo } from "../../helpers/git-repo.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import type { ApiClient } from "../../helpers/api-client.js";

const REPOSITORY: TestRepository = {
  id: 767676,
  full_name: "acme/in-job-refunds",
  default_branch: "main",
  installationId: 9090,
};
const SPEC_PATH = ".assure/specs/refund.yaml";

/**
 * The agent exists only inside the workflow's job (here: on this machine, where the service cannot
 * reach it — its environments point elsewhere): the Action holds the conversations in the runner
 * and uploads them; the service checks and judges them.
 */
describe("the GitHub Action with execute: in-job", () => {
  let agent: ExampleAgent;
  let issuer: OidcIssuer;
  let github: GitHubStandIn;
  let t: TestService;
  let client: ApiClient;
  let apiUrl: string;
  let projectId: string;
  const repo = makeGitRepo();
  let prNumber = 700;

  beforeAll(async () => {
    agent = await startExampleAgent();
    issuer = await startOidcIssuer();
    github = await startGitHubStandIn();
    // Not installed: the step plans the decision, and reads the base branch with the workflow's token.
    github.addRepository({ ...REPOSITORY, installationId: null });
    apiUrl = (await unusedBaseUrl()).replace(/\/v1$/, "");
    t = await startTestService({
      port: Number(new URL(apiUrl).port),
      env: {
        ...github.env,
        ASSURE_BASE_URL: apiUrl,
        ASSURE_OIDC_ISSUER: issuer.issuer,
        ASSURE_OIDC_JWKS_URL: issuer.jwksUrl,
        ASSURE_WORKERS: "2",
      },
    });
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "in-job-refunds",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "5.0.0" })).body.agent_id;
    // Where the service would look for the agent: nothing listens there.
    const nowhere = await unusedBaseUrl();
    for (const [name, model] of [
      ["ci", "refund-agent"],
      ["ci-sloppy", "refund-agent+wrong-arguments"],
    ] as const) {
      await client.post("/v1/environments", {
        name,
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: nowhere, model, headers: { authorization: "Bearer sealed" } },
      });
    }
    issuer.setRunnerClaims({
      repository: REPOSITORY.full_name,
      repository_id: String(REPOSITORY.id),
      workflow_ref: `${REPOSITORY.full_name}/.github/workflows/assure.yml@refs/heads/main`,
      run_id: "4343",
      run_attempt: "1",
      actor: "octocat",
      event_name: "pull_request",
    });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([agent.close(), issuer.close(), github.close()]);
    repo.close();
  });

  const files = (environment: string, policy: Record<string, unknown>) => ({
    ".assure/config.yml": stringify({
      version: 1,
      project: projectId,
      ...policy,
      runs: [{ specs: [".assure/specs/*.yaml"], environments: [environment] }],
    }),
    [SPEC_PATH]: deterministicSpecYaml({ repeat: 1 }),
  });

  /** A pull request onto a base branch whose config says `policy`; the step run on it in the job. */
  async function pullRequestInJob(environment: string, policy: Record<string, unknown>, inputs = {}) {
    const number = ++prNumber;
    repo.git("checkout", "-q", "--orphan", `base-${number}`);
    const baseFiles = files(environment, policy);
    const base = repo.commit(baseFiles, "base");
    repo.git("checkout", "-q", "-b", `feature-${number}`);
    const headFiles = { ...baseFiles, "notes.txt": `change ${number}` };
    const head = repo.commit(headFiles, `pull request ${number}`);
    github.commit(REPOSITORY.full_name, base, baseFiles, { committed_at: "2026-11-20T00:00:00Z" });
    github.commit(REPOSITORY.full_name, head, headFiles, { parents: [base], committed_at: "2026-11-21T00:00:00Z" });
    const payload = pullRequestEvent(REPOSITORY, { head, base, number, branch: `feature-${number}` });
    const run = await runAction({
      inputs: {
        "api-url": apiUrl,
        "timeout-seconds": "60",
        "github-token": github.workflowToken(),
        execute: "in-job",
        "agent-url": agent.baseUrl,
        "agent-headers": "Authorization: Bearer job-secret-1",
        ...inputs,
      },
      event: "pull_request",
      payload,
      workspace: repo.dir,
      sha: head,
      ref: `refs/pull/${number}/merge`,
      env: { ...issuer.runnerEnv, GITHUB_API_URL: github.apiUrl },
    });
    return { run, head };
  }
  const errors = (run: ActionRun) => run.commands.filter((c) => c.command === "error");

  it("holds the runs in the job against the job's agent, uploads them, and the service's verdict decides", async () => {
    const { run, head } = await pullRequestInJob("ci", { executed_outside_service: "allow" });
    expect([run.status, errors(run)]).toEqual([0, []]);
    expect(run.stdout).toContain("held in this job, uploaded: the service judges it");
    expect(run.outputs.decision).toBe("ALLOWED");
    const [runId] = JSON.parse(run.outputs["run-ids"]!) as string[];
    const stored = (await client.get(`/v1/runs/${runId}`)).body;
    expect(stored).toMatchObject({ executor: "local", status: "COMPLETED", verdict: "PASS" });
    expect(stored.uploaded_by).toEqual(expect.any(String));
    expect(stored.source).toMatchObject({ repository: REPOSITORY.full_name, commit_sha: head });
    // The service judged the uploaded conversations with its own evaluators.
    const evaluations = (await client.get(`/v1/runs/${runId}/evaluations?limit=200`)).body.data as { status: string }[];
    expect(evaluations.length).toBeGreaterThan(0);
    expect(evaluations.every((e) => e.status === "passed")).toBe(true);
    // The job summary reads as for a run the service executed, and says where this one was executed.
    expect(run.summary).toContain("Release allowed");
    expect(run.summary).toMatch(/local/);
    // The header given to the job's agent is masked (the runner hides what follows ::add-mask::), and
    // the service's sealed one never reaches the job.
    expect(agent.calls.filter((c) => c.path.endsWith("/chat/completions")).map((c) => c.authorization)).toContain(
      "Bearer job-secret-1",
    );
    const logged = run.stdout.replace(/^::add-mask::.*$/gm, "");
    expect(run.stdout).toContain("::add-mask::Bearer job-secret-1");
    expect(logged).not.toContain("job-secret-1");
    expect(run.stdout).not.toContain("Bearer sealed");
  });

  it("blocks a job's agent that fails its spec: the service finds the failures in the uploaded conversations", async () => {
    const { run } = await pullRequestInJob("ci-sloppy", { executed_outside_service: "allow" });
    expect(run.status).not.toBe(0);
    expect(run.outputs.decision).toBe("BLOCKED");
    const [runId] = JSON.parse(run.outputs["run-ids"]!) as string[];
    const failed = (await client.get(`/v1/runs/${runId}/evaluations?status=failed&limit=200`)).body.data;
    expect(failed.length).toBeGreaterThan(0);
  });

  it("does not let runs held in the job count where the base branch's policy does not allow it (the default)", async () => {
    const { run } = await pullRequestInJob("ci", {});
    expect(run.outputs.decision).toBe("BLOCKED");
    expect(run.status).not.toBe(0);
    expect(run.summary).toMatch(/executed outside the service/i);
  });

  it("refuses execute: in-job without an agent-url, before anything is sent", async () => {
    const { run } = await pullRequestInJob("ci", { executed_outside_service: "allow" }, { "agent-url": "" });
    expect(run.status).not.toBe(0);
    expect(
      errors(run)
        .map((e) => e.message)
        .join("\n"),
    ).toContain("execute: in-job needs agent-url");
  });

  it("refuses an agent-headers line that is not 'Name: value' without printing it (it may be a bare secret)", async () => {
    const { run } = await pullRequestInJob(
      "ci",
      { executed_outside_service: "allow" },
      { "agent-headers": "Bearer sk-bare-secret-9" },
    );
    expect(run.status).not.toBe(0);
    expect(errors(run).map((e) => e.message)).toEqual(["agent-headers: line 1 is not 'Name: value'."]);
    expect(run.stdout).not.toContain("sk-bare-secret-9");
  });
});
