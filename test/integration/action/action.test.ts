import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { pullRequestEvent, pushEvent, type TestRepository } from "../../../examples/github/events.js";
import { startOidcIssuer, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { runAction, type ActionRun } from "../../helpers/action-runner.js";
import { unusedBaseUrl } from "../../helpers/agent-endpoint.js";
import { makeGitRepo } from "../../helpers/git-repo.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import type { ApiClient } from "../../helpers/api-client.js";

/** A repository the GitHub App is not installed on: the step plans its decisions (planned_by: client). */
const REPOSITORY: TestRepository = {
  id: 737373,
  full_name: "acme/ci-refunds",
  default_branch: "main",
  installationId: 8080,
};
/** A repository the GitHub App gates: the step asks the App, which plans and starts the runs. */
const APP_REPOSITORY: TestRepository = {
  id: 747474,
  full_name: "acme/app-refunds",
  default_branch: "main",
  installationId: 8081,
};
const FORK = { id: 112233, full_name: "stranger/ci-refunds" };
const SPEC_PATH = ".assure/specs/refund.yaml";

describe("the GitHub Action", () => {
  let agent: ExampleAgent;
  let issuer: OidcIssuer;
  let github: GitHubStandIn;
  let t: TestService;
  let client: ApiClient;
  let apiUrl: string;
  let projectId: string;
  const repo = makeGitRepo();
  let prNumber = 300;
  let variant = 0;

  beforeAll(async () => {
    // `slow` answers after a minute: a run against it is still going when the Action gives up.
    agent = await startExampleAgent({ slowMs: 60_000 });
    issuer = await startOidcIssuer();
    github = await startGitHubStandIn();
    github.addRepository({ ...REPOSITORY, installationId: null });
    github.addRepository(APP_REPOSITORY);
    apiUrl = (await unusedBaseUrl()).replace(/\/v1$/, "");
    t = await startTestService({
      port: Number(new URL(apiUrl).port),
      env: {
        ...github.env,
        ASSURE_BASE_URL: apiUrl,
        ASSURE_OIDC_ISSUER: issuer.issuer,
        ASSURE_OIDC_JWKS_URL: issuer.jwksUrl,
        ASSURE_WORKERS: "4",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
      },
    });
    const repositories = [REPOSITORY, APP_REPOSITORY].map(({ id, full_name }) => ({ github_id: id, full_name }));
    projectId = (await t.admin.post("/v1/projects", { name: "ci-refunds", repositories })).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "4.0.0" })).body.agent_id;
    const origin = agent.baseUrl.replace(/\/v1$/, "");
    for (const [name, endpoint] of Object.entries({
      staging: { base_url: agent.baseUrl },
      sloppy: { base_url: agent.baseUrl, model: "refund-agent+wrong-arguments" },
      preview: { base_url: `${origin}/main/v1`, url_pattern: `${origin}/*/v1` },
      slow: { base_url: agent.baseUrl, model: "refund-agent+slow" },
    })) {
      await client.post("/v1/environments", {
        name,
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", headers: { authorization: "Bearer ci-agent-key" }, ...endpoint },
      });
    }
    issuer.setRunnerClaims(claims());
    repo.commit(files(["staging"]), "base");
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([agent.close(), issuer.close(), github.close()]);
    repo.close();
  });

  function claims(repositoryId = String(REPOSITORY.id), repository = REPOSITORY) {
    return {
      repository: repository.full_name,
      repository_id: repositoryId,
      workflow_ref: `${repository.full_name}/.github/workflows/assure.yml@refs/heads/main`,
      run_id: "4242",
      run_attempt: "1",
      actor: "octocat",
      event_name: "pull_request",
    };
  }
  function files(environments: string[], extra: Record<string, unknown> = {}) {
    return {
      ".assure/config.yml": stringify({
        version: 1,
        project: projectId,
        runs: [{ specs: [".assure/specs/*.yaml"], environments, ...extra }],
      }),
      [SPEC_PATH]: deterministicSpecYaml({ repeat: 1 }),
    };
  }
  /** A pull request as a workflow sees it: its head commit, and the merge commit actions/checkout checks out. */
  function pullRequest(
    headFiles: Record<string, string>,
    { fork, repository = REPOSITORY }: { fork?: boolean; repository?: TestRepository } = {},
  ) {
    const number = ++prNumber;
    repo.git("checkout", "-q", "main");
    const base = repo.git("rev-parse", "HEAD");
    repo.git("checkout", "-q", "-b", `feature-${number}`);
    const head = repo.commit({ ...headFiles, "variant.txt": String(++variant) }, `pull request ${number}`);
    repo.git("checkout", "-q", "--detach", base);
    repo.git("merge", "-q", "--no-ff", "-m", `Merge ${head} into ${base}`, head);
    const merge = repo.git("rev-parse", "HEAD");
    const payload = pullRequestEvent(repository, {
      head,
      base,
      number,
      branch: `feature-${number}`,
      ...(fork ? { fork: FORK } : {}),
    });
    const committed: Record<string, string> = { ...headFiles, "variant.txt": String(variant) };
    return { number, head, merge, payload, headFiles: committed };
  }
  const act = (
    pr: ReturnType<typeof pullRequest>,
    inputs: Record<string, string> = {},
    env: Record<string, string> = issuer.runnerEnv,
  ) =>
    runAction({
      inputs: { "api-url": apiUrl, "timeout-seconds": "60", ...inputs },
      event: "pull_request",
      payload: pr.payload,
      workspace: repo.dir,
      sha: pr.merge,
      ref: `refs/pull/${pr.number}/merge`,
      env,
    });
  const errors = (run: ActionRun) => run.commands.filter((c) => c.command === "error");

  it("passes a good agent: the step succeeds, sets its outputs and writes the job summary", async () => {
    const pr = pullRequest(files(["staging"]));
    const run = await act(pr);
    expect([run.status, errors(run)]).toEqual([0, []]);
    const runIds = JSON.parse(run.outputs["run-ids"]!) as string[];
    expect(runIds).toHaveLength(1);
    expect(run.outputs).toMatchObject({
      decision: "ALLOWED",
      "decision-api-url": expect.stringMatching(new RegExp(`^${apiUrl}/v1/release-decisions/dec_\\w+$`)),
      "decision-url": expect.stringMatching(new RegExp(`^${apiUrl}/decisions/dec_\\w+\\?exp=\\d+&sig=[\\w-]{43}$`)),
    });
    // The page opens without an API key.
    expect((await fetch(run.outputs["decision-url"]!)).status).toBe(200);
    expect(JSON.parse(run.outputs.verdicts!)).toEqual({ [runIds[0]!]: "PASS" });
    expect(run.summary).toContain("Release allowed");
    // Without the App on the repository, the step planned the decision: it says so, and so does the decision.
    expect(run.summary).toContain("Planned by the client that made it");
    expect((await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body.planned_by).toBe("client");
    // The summary links the run's page, signed: a reader of the job needs no API key.
    const pageLink = new RegExp(`${apiUrl}/runs/${runIds[0]}\\?exp=\\d+&sig=[\\w-]{43}`).exec(run.summary)?.[0];
    expect(pageLink).toBeDefined();
    expect((await fetch(pageLink!)).status).toBe(200);
    // The run is the commit's: the pull request's head, not the merge commit, with the App's source.
    const stored = (await client.get(`/v1/runs/${runIds[0]}`)).body;
    expect(stored.source).toEqual({
      repository: REPOSITORY.full_name,
      commit_sha: pr.head,
      ref: `refs/heads/feature-${pr.number}`,
      pull_request: pr.number,
    });
    expect((await client.get(`/v1/test-specs/${stored.test_spec_id}`)).body.spec_version).toBe(
      `git:${repo.git("rev-parse", `${pr.head}:${SPEC_PATH}`)}`,
    );

    // A re-run of the workflow finds the same runs; asking for a new attempt starts new ones.
    const again = await act(pr);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.outputs["run-ids"]!)).toEqual(runIds);
    const fresh = await act(pr, { "new-attempt": "true" });
    expect(fresh.status).toBe(0);
    const freshIds = JSON.parse(fresh.outputs["run-ids"]!) as string[];
    expect(freshIds).toHaveLength(1);
    expect(freshIds).not.toEqual(runIds);
    expect((await client.get(fresh.outputs["decision-api-url"]!.replace(apiUrl, ""))).body).toMatchObject({
      attempt: 2,
      status: "ALLOWED",
    });
  });

  it("fails when the decision does not come in time, naming the runs still going", async () => {
    // Long enough for the Action to start its run on a loaded machine: the run itself takes minutes.
    const run = await act(pullRequest(files(["slow"])), { "timeout-seconds": "10" });
    expect(run.status).toBe(1);
    expect(run.outputs.decision).toBe("PENDING");
    expect(errors(run).at(-1)!.message).toMatch(
      /^Timed out after 10 s with the release still pending: run_\w+ \.assure\/specs\/refund\.yaml in slow \((QUEUED|RUNNING|EVALUATING)\)/,
    );
  });

  it("starts no run for an entry executed outside the service: the decision waits for its upload", async () => {
    const pr = pullRequest(files(["staging"], { executor: "local" }));
    const run = await act(pr, { wait: "false" });
    expect(run.status).toBe(0);
    expect(run.outputs.decision).toBe("PENDING");
    expect(JSON.parse(run.outputs["run-ids"]!)).toEqual([]);
    expect(run.commands).toContainEqual(
      expect.objectContaining({ command: "notice", message: expect.stringContaining("executed outside the service") }),
    );
    const decision = (await client.get(new URL(run.outputs["decision-api-url"]!).pathname)).body;
    expect(decision).toMatchObject({ planned_by: "client", planned: [{ executor: "local", run_id: null }], runs: [] });
  });

  it("fails the step for a sloppy agent, annotating the spec lines", async () => {
    const pr = pullRequest(files(["sloppy"]));
    const run = await act(pr);
    expect(run.status).toBe(1);
    expect(run.outputs.decision).toBe("BLOCKED");
    const annotations = errors(run).filter((c) => c.properties.file === SPEC_PATH);
    expect(annotations.length).toBeGreaterThan(0);
    expect(annotations.length).toBeLessThanOrEqual(10);
    const lines = pr.headFiles[SPEC_PATH]!.split("\n");
    for (const a of annotations) {
      expect(lines[Number(a.properties.line) - 1]).toMatch(/tool_called|tool_sequence|response/);
    }
    expect(errors(run).at(-1)!.message).toMatch(/^Release blocked: 1 of 1 gate failed/);
    expect(run.summary).toContain("Release blocked");
    // The job summary names each failed check as the check run does, with what the agent did, read through the API.
    const named = [
      ...run.summary.matchAll(
        /^- ❌ `[\w-]+` `((?:tool_called|tool_sequence|response)[^`]*)` at `([^`]+):(\d+)`: failed, `[^`]+` \(\[evidence\]\(\S+\)\)\n {2}- repeat 1, turn \d+: (?:said `[^`]*`|no reply); (?:called `lookup_order\([^`]*\)`|called no tool)$/gm,
      ),
    ];
    expect(named.length).toBeGreaterThan(0);
    for (const [, check, path, line] of named) {
      expect(path).toBe(SPEC_PATH);
      expect(lines[Number(line) - 1]).toContain(check!.split(" ")[0]);
    }
  });

  it("writes the security coverage table in the job summary, and fails a coverage gate naming what was not probed", async () => {
    const spec = parse(deterministicSpecYaml({ repeat: 1 })) as { security?: unknown; gates: unknown[] };
    spec.security = [{ family: "system-prompt-leakage" }];
    spec.gates.push({ id: "COV", require: { coverage: "owasp-llm-2025" } });
    const run = await act(pullRequest({ ...files(["staging"]), [SPEC_PATH]: stringify(spec) }));
    expect(run.status).toBe(1);
    expect(run.summary).toMatch(/^\| COV \| failed \| 6 of 7 owasp-llm-2025 categories not probed: LLM01, /m);
    expect(run.summary).toContain("<summary>Security coverage: 1 of 10 categories probed</summary>");
    expect(run.summary).toMatch(/^\| LLM07 System Prompt Leakage \| [1-9]\d* \| 0 \| 0 \| {2}\|$/m);
  });

  it("leaves a fork's pull request to the App: no OIDC token, a notice, success", async () => {
    const pr = pullRequest(files(["staging"]), { fork: true });
    const run = await act(pr, {}, {});
    expect(run.status).toBe(0);
    expect(run.commands).toContainEqual(
      expect.objectContaining({ command: "notice", message: expect.stringContaining("comes from a fork") }),
    );
    expect(run.outputs).toEqual({});
  });

  it("tests the agent-url it is given when it matches the environment's pattern, and fails with the service's 400 when not", async () => {
    const pr = pullRequest(files(["preview"], { on_deployment: "pr-preview" }));
    const origin = agent.baseUrl.replace(/\/v1$/, "");
    const deployed = `${origin}/deploy-${pr.number}/v1`;
    const run = await act(pr, { "agent-url": deployed });
    expect(run.status).toBe(0);
    expect(agent.calls.some((call) => call.path === `/deploy-${pr.number}/v1/chat/completions`)).toBe(true);
    const runId = (JSON.parse(run.outputs["run-ids"]!) as string[])[0];
    expect((await client.get(`/v1/runs/${runId}`)).body).toMatchObject({ agent_url: deployed, agent_version: pr.head });

    const elsewhere = await act(pullRequest(files(["preview"], { on_deployment: "pr-preview" })), {
      "agent-url": "http://127.0.0.1:9/v1",
    });
    expect(elsewhere.status).toBe(1);
    expect(errors(elsewhere).at(-1)!.message).toMatch(
      /400 AGENT_URL_NOT_ALLOWED: .*may not reach its agent at http:\/\/127\.0\.0\.1:9\/v1/,
    );
  });

  it("reports a refused sign-in clearly: wrong audience, expired token, unbound repository", async () => {
    const pr = pullRequest(files(["staging"]));
    const wrongAudience = await act(pr, { "api-url": apiUrl.replace("127.0.0.1", "localhost") });
    issuer.setRunnerClaims(claims(), { issuedAt: Date.now() / 1000 - 3600, lifetimeS: 300 });
    const expired = await act(pr);
    issuer.setRunnerClaims(claims("999999"));
    const unbound = await act(pr);
    issuer.setRunnerClaims(claims());
    for (const [run, reason] of [
      [wrongAudience, "wrong_audience"],
      [expired, "expired"],
      [unbound, "repository_not_bound"],
    ] as const) {
      expect(run.status).toBe(1);
      expect(errors(run).at(-1)!.message).toMatch(
        new RegExp(`^assure refused the sign-in: POST /v1/auth/github-oidc → 401 UNAUTHENTICATED: .*\\[${reason}\\]`),
      );
    }
  });

  it("names the missing permission when the job has no OIDC token and no key", async () => {
    const run = await act(pullRequest(files(["staging"])), {}, {});
    expect(run.status).toBe(1);
    expect(errors(run).at(-1)!.message).toContain("permissions: id-token: write");
  });

  describe("on a repository the GitHub App gates", () => {
    beforeAll(() => issuer.setRunnerClaims(claims(String(APP_REPOSITORY.id), APP_REPOSITORY)));
    afterAll(() => issuer.setRunnerClaims(claims()));
    /** A pull request on the App's repository, its head known to GitHub. */
    function appPullRequest(headFiles: Record<string, string>) {
      const pr = pullRequest(headFiles, { repository: APP_REPOSITORY });
      github.commit(APP_REPOSITORY.full_name, pr.head, pr.headFiles);
      const { head, base } = pr.payload.pull_request as { head: { sha: string; ref: string }; base: { sha: string } };
      github.pullRequest(APP_REPOSITORY.full_name, pr.number, {
        author: "octocat",
        head: { sha: head.sha, ref: head.ref },
        base: { sha: base.sha },
      });
      return pr;
    }

    it("asks the App to gate the commit, waits for the App's decision and reports it; the App and the step share it", async () => {
      const pr = appPullRequest(files(["staging"]));
      const run = await act(pr);
      expect([run.status, errors(run)]).toEqual([0, []]);
      expect(run.stdout).toContain("is gated by the assure GitHub App");
      const decision = (await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body;
      expect(decision).toMatchObject({
        planned_by: "app",
        status: "ALLOWED",
        subject: { repository: APP_REPOSITORY.full_name, commit_sha: pr.head },
      });
      const runIds = JSON.parse(run.outputs["run-ids"]!) as string[];
      expect(runIds).toEqual(decision.planned.map((slot: { run_id: string }) => slot.run_id));
      expect((await client.get(`/v1/runs/${runIds[0]}`)).body).toMatchObject({
        started_by: "github-app",
        source: { commit_sha: pr.head, pull_request: pr.number },
      });
      // The App's check run shows that decision; the pull request's own delivery later finds it, and starts nothing more.
      const checkRun = await waitFor(
        () => github.currentCheckRun(APP_REPOSITORY.full_name, pr.head),
        "the App's check run",
      );
      expect(checkRun.external_id).toBe(decision.decision_id);
      await github.deliver(t.baseUrl, "pull_request", pr.payload);
      await waitFor(
        async () => (await t.service.store.listGitHubCommitsOfSha(APP_REPOSITORY.id, pr.head))[0]?.revision === 2,
        "the delivery to be processed",
      );
      expect(
        (await client.get(`/v1/release-decisions/${decision.decision_id}`)).body.runs.map(
          (r: { run_id: string }) => r.run_id,
        ),
      ).toEqual(runIds);
    });

    it("reads a spec's table at the pull request's head as the App does: the same spec version, the same runs", async () => {
      const tableSpecPath = ".assure/specs/refunds.yaml";
      // Over 1 MB (a column of long notes): GitHub's contents API leaves such a file's content out, and the App reads its blob.
      const notes = "x".repeat(400_000);
      const table = `id,order_id,amount,notes\nfirst,A-100,42.5,${notes}\nsecond,B-7,10,${notes}\nthird,C-3,7.25,${notes}\n`;
      expect(table.length).toBeGreaterThan(1024 * 1024);
      const pr = appPullRequest({
        ...files(["staging"]),
        [tableSpecPath]: readFileSync(new URL("../../../examples/tables/refunds-table.yaml", import.meta.url), "utf8"),
        ".assure/refunds.csv": table,
      });
      const run = await act(pr);
      expect([run.status, errors(run)]).toEqual([0, []]);
      const decision = (await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body;
      expect(JSON.parse(run.outputs["run-ids"]!).sort()).toEqual(
        decision.runs.map((r: { run_id: string }) => r.run_id).sort(),
      );
      const tableRun = (
        await Promise.all(
          decision.runs.map(async (r: { run_id: string }) => (await client.get(`/v1/runs/${r.run_id}`)).body),
        )
      ).find((r) => r.spec_version.startsWith("sha256:"));
      const spec = (await client.get(`/v1/test-specs/${tableRun.test_spec_id}`)).body;
      expect(spec.source.files).toEqual([
        { path: tableSpecPath, blob_sha: repo.git("rev-parse", `${pr.head}:${tableSpecPath}`) },
        { path: ".assure/refunds.csv", blob_sha: repo.git("rev-parse", `${pr.head}:.assure/refunds.csv`) },
      ]);
      const conversations = (await client.get(`/v1/runs/${tableRun.run_id}/conversations`)).body.data.map(
        (c: { scenario_id: string }) => c.scenario_id,
      );
      expect(conversations.sort()).toEqual(["refund[first]", "refund[second]", "refund[third]"]);
    });
  });

  describe("a pull request judged against its base branch, as the App judges it", () => {
    /** The deterministic spec at repeat 5 with a gate on the change. */
    function comparedFiles(edit: (spec: { gates: unknown[]; scenarios: unknown[] }) => void = () => {}) {
      const spec = parse(deterministicSpecYaml({ repeat: 5 })) as { gates: unknown[]; scenarios: unknown[] };
      spec.gates.push({ id: "NOREG", require: { no_regression: { max_drop: 0.05, confidence: 0.95 } } });
      edit(spec);
      return { ...files(["staging"]), [SPEC_PATH]: stringify(spec) };
    }
    let baseSha: string;
    const asWorkflow = () => ({ ...issuer.runnerEnv, GITHUB_API_URL: github.apiUrl });

    beforeAll(async () => {
      // main's newest commit, gated by the Action on push: the baseline of the pull requests below.
      repo.git("checkout", "-q", "main");
      const parent = repo.git("rev-parse", "HEAD");
      const baseFiles = comparedFiles();
      baseSha = repo.commit(baseFiles, "gate on the change");
      github.commit(REPOSITORY.full_name, parent, {}, { committed_at: "2026-11-19T00:00:00Z" });
      github.commit(REPOSITORY.full_name, baseSha, baseFiles, {
        parents: [parent],
        committed_at: "2026-11-20T00:00:00Z",
      });
      const pushed = await runAction({
        inputs: { "api-url": apiUrl, "timeout-seconds": "60" },
        event: "push",
        payload: pushEvent(REPOSITORY, { after: baseSha, branch: "main" }),
        workspace: repo.dir,
        sha: baseSha,
        ref: "refs/heads/main",
        env: asWorkflow(),
      });
      expect([pushed.status, pushed.outputs.decision]).toEqual([0, "ALLOWED"]);
    });
    afterEach(() => agent.behave([]));

    /** A pull request off main, its head known to GitHub too. */
    function comparedPullRequest(headFiles: Record<string, string>) {
      const pr = pullRequest(headFiles);
      github.commit(REPOSITORY.full_name, pr.head, pr.headFiles, {
        parents: [baseSha],
        committed_at: "2026-11-21T00:00:00Z",
      });
      return pr;
    }
    const token = () => ({ "github-token": github.workflowToken() });

    it("finds the regressions of a sloppier agent against main's decision, and fails the step", async () => {
      agent.behave(["wrong-arguments"]);
      const pr = comparedPullRequest(comparedFiles());
      const run = await act(pr, token(), asWorkflow());
      expect(run.status).toBe(1);
      expect(run.summary).toContain(`Compared with the base branch: baseline \`${baseSha.slice(0, 7)}\``);
      expect(run.summary).toMatch(/\| `[^`]+` \| ⬇️ regressed \| 5\/5 \| 0\/5 \| 0\.004 \|/);
      const decision = (await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body;
      expect(decision.baseline).toMatchObject({
        found: true,
        commit_sha: baseSha,
        age_commits: 0,
        merge_base_sha: baseSha,
      });
      expect(decision.reasons.find((r: { gate_id: string }) => r.gate_id === "NOREG")).toMatchObject({
        status: "failed",
        blocking: true,
      });
      // GitHub was asked with the workflow's token, as the App asks with its installation's.
      const asked = github.requests.filter(
        (r) =>
          r.method === "GET" && r.path.startsWith(`/repos/${REPOSITORY.full_name}/compare/${baseSha}...${pr.head}`),
      );
      expect(asked.length).toBeGreaterThan(0);
    });

    it("blocks a head that removes a check from main's policy until a writer approves it", async () => {
      const pr = comparedPullRequest(comparedFiles((spec) => spec.scenarios.pop()));
      const run = await act(pr, token(), asWorkflow());
      expect(run.status).toBe(1);
      expect(run.summary).toContain(
        "Policy changes to the base branch's `.assure/`: **blocking until a writer other than the author approves them**",
      );
      const decision = (await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body;
      expect(decision.policy_changes.map((c: { kind: string }) => c.kind)).toContain("removed");
    });

    it("still gates, comparing nothing, when GitHub refuses the token, and says why", async () => {
      const pr = comparedPullRequest(comparedFiles());
      const run = await act(pr, { "github-token": "ghs_not-a-token" }, asWorkflow());
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(
        /Could not read the base branch \w{7} from GitHub \(GitHub refused the github-token \(401\): it needs contents: read\)/,
      );
      const decision = (await client.get(run.outputs["decision-api-url"]!.replace(apiUrl, ""))).body;
      expect(decision.baseline).toBeNull();
    });
  });
});
