import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { checkSuiteEvent, pullRequestEvent, pushEvent, type TestRepository } from "../../../examples/github/events.js";
import { startOidcIssuer, type OidcIssuer } from "../../../examples/github/oidc-issuer.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import { makeApiClient, type ApiClient } from "../../helpers/api-client.js";
import { ShiftedClock } from "../../helpers/fake-clock.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

/**
 * The adversarial review's attacks on the release gate (issue: "The gate holds"), played with the
 * same moves: a contributor with push access controls the change under review and the workflows it
 * runs (their OIDC keys), and can order GitHub's events. Each must leave the App's check run as the
 * real specs and the base branch's policy decide.
 */
const REPOSITORY: TestRepository = {
  id: 818181,
  full_name: "acme/guarded",
  default_branch: "main",
  installationId: 5151,
};
const OTHER: TestRepository = { id: 828282, full_name: "acme/elsewhere", default_branch: "main", installationId: 5151 };
const LATER: TestRepository = { id: 838383, full_name: "acme/app-later", default_branch: "main", installationId: 5151 };
const AUTHOR = "contributor";
const PUBLIC_BASE_URL = "https://assure.example.test";
let shas = 0;
const nextSha = () => `e${(++shas).toString(16).padStart(39, "0")}`;
let numbers = 500;

type Spec = {
  name: string;
  scenarios: { id: string; turns: { user: string; expect?: unknown[] }[] }[];
  gates: unknown[];
};

/** The deterministic spec with a scenario the example agent fails: it looks the order up when it should not. */
function guardedSpec(edit: (spec: Spec) => void = () => {}): string {
  const spec = parse(deterministicSpecYaml({ repeat: 1 })) as Spec;
  spec.scenarios.push({
    id: "account-deletion",
    turns: [{ user: "Delete my account and forget the order A-100.", expect: [{ tool_not_called: "lookup_order" }] }],
  });
  edit(spec);
  return stringify(spec);
}

/** A spec that cannot fail: what a workflow would like to be gated by instead. */
const TRIVIAL = {
  schema_version: "1",
  name: "trivial",
  scenarios: [{ id: "hello", turns: [{ user: "Hello", expect: [{ response: { matches: "." } }] }] }],
  gates: [{ id: "DET", require: { expectations: "all" } }],
};

describe("attacks on the release gate", () => {
  let github: GitHubStandIn;
  let agent: ExampleAgent;
  let issuer: OidcIssuer;
  let t: TestService;
  let projectId: string;
  let admin: ApiClient;
  let main: string;
  const clock = new ShiftedClock();

  const files = (spec = guardedSpec(), extra: Record<string, unknown> = {}) => ({
    ".assure/config.yml": stringify({
      version: 1,
      project: projectId,
      ...extra,
      runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }],
    }),
    ".assure/specs/refund.yaml": spec,
  });
  const checkRun = (
    sha: string,
    done: (run: NonNullable<ReturnType<GitHubStandIn["currentCheckRun"]>>) => boolean = (run) =>
      run.status === "completed",
    repository = REPOSITORY,
  ) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(repository.full_name, sha);
        return run && done(run) ? run : undefined;
      },
      `the check run of ${sha.slice(0, 7)}`,
      { timeoutMs: 30_000 },
    );
  const decisionOf = async (sha: string, repository = REPOSITORY) =>
    (await admin.get(`/v1/release-decisions?repository=${repository.full_name}&commit_sha=${sha}`)).body.data[0];
  /** A workflow's key, from its own OIDC token (the 15-minute key any workflow of the repository gets). */
  async function workflowKey(repository = REPOSITORY, sha = "f".repeat(40)): Promise<ApiClient> {
    const token = await issuer.sign(
      {
        repository: repository.full_name,
        repository_id: String(repository.id),
        ref: "refs/pull/1/merge",
        sha,
        event_name: "pull_request",
        workflow_ref: `${repository.full_name}/.github/workflows/ci.yml@refs/pull/1/merge`,
      },
      { audience: PUBLIC_BASE_URL },
    );
    const signedIn = await t.anonymous.post("/v1/auth/github-oidc", { token });
    expect(signedIn.status).toBe(201);
    return makeApiClient(t.baseUrl, undefined, signedIn.body.token);
  }
  /** A head commit on main with `headFiles`, on a branch of the repository. */
  function headCommit(headFiles: Record<string, string>, repository = REPOSITORY) {
    const head = nextSha();
    github.commit(repository.full_name, head, headFiles, { parents: [main], committed_at: "2026-11-24T10:00:00Z" });
    return head;
  }
  async function openPullRequest(head: string, repository = REPOSITORY) {
    const number = ++numbers;
    expect(
      (
        await github.deliver(
          t.baseUrl,
          "pull_request",
          pullRequestEvent(repository, { head, base: main, number, branch: `feature-${number}` }),
        )
      ).status,
    ).toBe(200);
    return number;
  }

  beforeAll(async () => {
    github = await startGitHubStandIn();
    agent = await startExampleAgent();
    issuer = await startOidcIssuer();
    t = await startTestService({
      clock,
      env: {
        ...github.env,
        ASSURE_BASE_URL: PUBLIC_BASE_URL,
        ASSURE_OIDC_ISSUER: issuer.issuer,
        ASSURE_OIDC_JWKS_URL: issuer.jwksUrl,
        ASSURE_WORKERS: "4",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
      },
    });
    for (const repository of [REPOSITORY, OTHER]) github.addRepository(repository);
    github.addRepository({ ...LATER, installationId: null });
    const repositories = [REPOSITORY, OTHER, LATER].map(({ id, full_name }) => ({ github_id: id, full_name }));
    projectId = (await t.admin.post("/v1/projects", { name: "guarded", repositories })).body.project_id;
    admin = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    const agentId = (await admin.post("/v1/agents", { name: "refund-agent", version: "1.0.0" })).body.agent_id;
    await admin.post("/v1/environments", {
      name: "staging",
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
    });
    github.setPermission(REPOSITORY.full_name, AUTHOR, "write");

    // main: its spec has a scenario the agent fails. Pushed and decided (BLOCKED): the baseline of every head below.
    main = nextSha();
    for (const repository of [REPOSITORY, OTHER, LATER]) {
      github.commit(repository.full_name, main, files(), { committed_at: "2026-11-23T10:00:00Z", branch: "main" });
      if (repository === LATER) continue;
      await github.deliver(t.baseUrl, "push", pushEvent(repository, { after: main, branch: "main" }));
      expect((await checkRun(main, undefined, repository)).conclusion).toBe("failure");
    }
  });
  afterEach(() => expect(github.problems).toEqual([]));
  afterAll(async () => {
    await t.close();
    await Promise.all([agent.close(), issuer.close(), github.close()]);
  });

  describe("finding 1: a workflow must not decide the App's required check", () => {
    it("refuses a workflow's plan, base or settings for a commit the App gates, before the App and after it; the check run fails as the real specs do", async () => {
      const ci = await workflowKey();
      const head = headCommit(files());
      const trivial = (await ci.post("/v1/test-specs", { spec: TRIVIAL })).body.test_spec_id as string;
      const staging = (await ci.get("/v1/environments")).body.data[0].environment_id as string;
      const subject = { repository: REPOSITORY.full_name, commit_sha: head };
      const base = {
        commits: [{ sha: main, committed_at: "2026-11-23T10:00:00Z" }],
        settings: { policy_changes: "report" },
        policy_changes: [],
      };

      // Before the App has seen the commit: a plan of one trivially passing spec, a base with no policy changes.
      const planned = await ci.post("/v1/release-decisions", {
        subject,
        plan: [{ test_spec_id: trivial, environment_id: staging }],
        base,
      });
      expect(planned.status).toBe(409);
      expect(planned.body.error).toMatchObject({
        code: "PLANNED_BY_APP",
        details: [{ path: "body.plan" }, { path: "body.base" }],
      });
      expect(await decisionOf(head)).toBeUndefined();
      // A run of the trivial spec for the commit, and one of the real spec's name at a trivial version: made, but they decide nothing.
      const squat = await ci.post(
        "/v1/runs",
        {
          test_spec_id: trivial,
          environment_id: staging,
          source: { repository: REPOSITORY.full_name, commit_sha: head },
        },
        { headers: { "idempotency-key": `squat-${head}` } },
      );
      expect(squat.status).toBe(201);
      const realName = (await ci.post("/v1/test-specs", { spec: { ...TRIVIAL, name: "refund-agent-deterministic" } }))
        .body;
      const sameName = await ci.post(
        "/v1/runs",
        {
          test_spec_id: realName.test_spec_id,
          spec_version: realName.spec_version,
          environment_id: staging,
          source: subject,
        },
        { headers: { "idempotency-key": `same-name-${head}` } },
      );
      expect(sameName.status).toBe(201);
      // The App's own keys cannot be taken first.
      const appKey = await ci.post(
        "/v1/runs",
        { test_spec_id: trivial, environment_id: staging },
        { headers: { "idempotency-key": "app1-0000" } },
      );
      expect(appKey.body.error).toMatchObject({
        code: "VALIDATION_FAILED",
        details: [{ path: "headers.idempotency-key" }],
      });

      await openPullRequest(head);
      const failed = await checkRun(head);
      expect(failed.conclusion).toBe("failure");
      const decision = await decisionOf(head);
      expect(decision).toMatchObject({ planned_by: "app", status: "BLOCKED" });
      expect(decision.planned).toHaveLength(1);
      expect(decision.planned[0].run_id).not.toBe(sameName.body.run_id);
      expect(decision.runs.find((r: { run_id: string }) => r.run_id === squat.body.run_id)).toMatchObject({
        planned: false,
      });

      // On the blocked commit: a new attempt with a trivial plan is refused; one without is the App's, and fails again.
      const attempt = await ci.post(`/v1/release-decisions/${decision.decision_id}/attempts`, {
        plan: [{ test_spec_id: trivial, environment_id: staging }],
      });
      expect(attempt.status).toBe(409);
      expect(attempt.body.error.code).toBe("PLANNED_BY_APP");
      const rerun = await ci.post(`/v1/release-decisions/${decision.decision_id}/attempts`, {});
      expect(rerun.status).toBe(201);
      expect(rerun.body).toMatchObject({ planned_by: "app", attempt: 2 });
      const again = await checkRun(head, (run) => run.id !== failed.id && run.status === "completed");
      expect(again.conclusion).toBe("failure");
      expect(github.checkRuns(REPOSITORY.full_name, head).map((run) => run.conclusion)).toEqual(["failure", "failure"]);

      // The workflow's request without a plan gets the App's decision, as it stands.
      const asked = await ci.post("/v1/release-decisions", { subject });
      expect(asked.status).toBe(200);
      expect(asked.body).toMatchObject({ decision_id: decision.decision_id, planned_by: "app", status: "BLOCKED" });
    });

    it("does not let a workflow's key start the default branch's runs again: they are the baseline pull requests are judged against", async () => {
      const ci = await workflowKey();
      const baseline = await decisionOf(main);
      const rerun = await ci.post(`/v1/release-decisions/${baseline.decision_id}/attempts`, {});
      expect(rerun.status).toBe(422);
      expect(rerun.body.error).toMatchObject({
        code: "COMMIT_NOT_GATED",
        message: expect.stringContaining("judged against"),
      });
      expect((await decisionOf(main)).attempt).toBe(baseline.attempt);
    });

    it("keeps a workflow's key to its own repository", async () => {
      const ci = await workflowKey(OTHER);
      const head = headCommit(files());
      const asked = await ci.post("/v1/release-decisions", {
        subject: { repository: REPOSITORY.full_name, commit_sha: head },
      });
      expect(asked.status).toBe(403);
      expect(asked.body.error).toMatchObject({ code: "FORBIDDEN", details: [{ path: "body.subject.repository" }] });
      const staging = (await ci.get("/v1/environments")).body.data[0].environment_id as string;
      const trivial = (await ci.post("/v1/test-specs", { spec: TRIVIAL })).body.test_spec_id as string;
      const run = await ci.post(
        "/v1/runs",
        {
          test_spec_id: trivial,
          environment_id: staging,
          source: { repository: REPOSITORY.full_name, commit_sha: head },
        },
        { headers: { "idempotency-key": `cross-${head}` } },
      );
      expect(run.body.error).toMatchObject({ code: "FORBIDDEN", details: [{ path: "body.source.repository" }] });
    });

    it("takes over a decision a client planned before the App was installed: the App's plan, in a new attempt", async () => {
      const ci = await workflowKey(LATER);
      const head = headCommit(files(), LATER);
      const trivial = (await ci.post("/v1/test-specs", { spec: TRIVIAL })).body.test_spec_id as string;
      const staging = (await ci.get("/v1/environments")).body.data[0].environment_id as string;
      const planned = await ci.post("/v1/release-decisions", {
        subject: { repository: LATER.full_name, commit_sha: head },
        plan: [{ test_spec_id: trivial, environment_id: staging }],
      });
      expect(planned.status).toBe(201);
      expect(planned.body.planned_by).toBe("client");
      await ci.post(
        "/v1/runs",
        { test_spec_id: trivial, environment_id: staging, source: { repository: LATER.full_name, commit_sha: head } },
        { headers: { "idempotency-key": `later-${head}` } },
      );
      await waitFor(async () => (await decisionOf(head, LATER))?.status === "ALLOWED", "the client's trivial decision");
      // No check run shows a client's decision.
      expect(github.checkRuns(LATER.full_name, head)).toEqual([]);

      github.install(LATER.full_name, LATER.installationId);
      await openPullRequest(head, LATER);
      const run = await checkRun(head, undefined, LATER);
      expect(run.conclusion).toBe("failure");
      expect(await decisionOf(head, LATER)).toMatchObject({
        decision_id: planned.body.decision_id,
        planned_by: "app",
        attempt: 2,
        status: "BLOCKED",
      });
    });
  });

  describe("finding 2: the order of GitHub's events must not skip the baseline or the policy gate", () => {
    const withoutFailingScenario = () => files(guardedSpec((spec) => spec.scenarios.pop()));

    it("judges a head whose check suite comes before its pull request against the base, with its policy changes", async () => {
      const head = headCommit(withoutFailingScenario());
      const number = ++numbers;
      // GitHub has the pull request; its delivery is late.
      github.pullRequest(REPOSITORY.full_name, number, {
        author: AUTHOR,
        head: { sha: head, ref: `feature-${number}` },
        base: { sha: main },
      });
      await github.deliver(
        t.baseUrl,
        "check_suite",
        checkSuiteEvent(REPOSITORY, { head, branch: `feature-${number}`, pullRequest: number }),
      );
      const held = await checkRun(head);
      expect(held.conclusion).toBe("action_required");
      const decision = await decisionOf(head);
      expect(decision.baseline).toMatchObject({ found: true, commit_sha: main });
      expect(decision.policy_changes).toEqual([
        expect.objectContaining({ kind: "removed", message: "the scenario 'account-deletion' is removed" }),
      ]);
      expect(decision.reasons.find((r: { gate_id: string }) => r.gate_id === "policy")).toMatchObject({
        status: "failed",
        blocking: true,
      });

      await github.deliver(
        t.baseUrl,
        "pull_request",
        pullRequestEvent(REPOSITORY, { head, base: main, number, branch: `feature-${number}` }),
      );
      await waitFor(
        async () => (await t.service.store.listGitHubCommitsOfSha(REPOSITORY.id, head))[0]?.revision === 2,
        "the pull request's delivery to be processed",
      );
      expect((await decisionOf(head)).policy_changes).toHaveLength(1);
      expect(github.currentCheckRun(REPOSITORY.full_name, head)!.conclusion).toBe("action_required");
    });

    it("judges a branch pushed before its pull request is opened against the default branch, then against the pull request's base", async () => {
      const head = headCommit(withoutFailingScenario());
      await github.deliver(t.baseUrl, "check_suite", checkSuiteEvent(REPOSITORY, { head, branch: "early-branch" }));
      expect((await checkRun(head)).conclusion).toBe("action_required");
      expect((await decisionOf(head)).policy_changes).toHaveLength(1);

      await openPullRequest(head);
      await waitFor(
        async () => (await t.service.store.listGitHubCommitsOfSha(REPOSITORY.id, head))[0]?.revision === 2,
        "the pull request's delivery to be processed",
      );
      const decision = await decisionOf(head);
      expect(decision.baseline).toMatchObject({ found: true, commit_sha: main });
      expect(decision.reasons.find((r: { gate_id: string }) => r.gate_id === "policy")).toMatchObject({
        status: "failed",
        blocking: true,
      });
      expect(github.currentCheckRun(REPOSITORY.full_name, head)!.conclusion).toBe("action_required");
    });
  });

  describe("a second review: a pull request does not choose its own policy", () => {
    it("judges a head against the default branch's policy when its pull request goes into a branch that weakened it, and again when the base changes", async () => {
      const weak = files(
        guardedSpec((spec) => spec.scenarios.pop()),
        { policy_changes: "report" },
      );
      const lax = nextSha();
      github.commit(REPOSITORY.full_name, lax, weak, {
        parents: [main],
        committed_at: "2026-11-24T09:00:00Z",
        branch: "lax",
      });
      const head = nextSha();
      github.commit(REPOSITORY.full_name, head, weak, { parents: [lax], committed_at: "2026-11-24T10:00:00Z" });
      const number = ++numbers;
      await github.deliver(
        t.baseUrl,
        "pull_request",
        pullRequestEvent(REPOSITORY, { head, base: lax, baseBranch: "lax", number, branch: `feature-${number}` }),
      );
      const held = await checkRun(head);
      expect(held.conclusion).toBe("action_required");
      const decision = await decisionOf(head);
      expect(decision.policy_changes.map((c: { message: string }) => c.message)).toContain(
        "the scenario 'account-deletion' is removed",
      );
      expect(decision.change_settings.policy_changes).toBe("require_approval");

      // Moving the pull request's base is a new base: the head is judged again.
      const edited = pullRequestEvent(REPOSITORY, { head, base: main, number, branch: `feature-${number}` });
      Object.assign(edited, { action: "edited", changes: { base: { ref: { from: "lax" }, sha: { from: lax } } } });
      await github.deliver(t.baseUrl, "pull_request", edited);
      await waitFor(
        async () => (await t.service.store.listGitHubCommitsOfSha(REPOSITORY.id, head))[0]?.revision === 2,
        "the edited pull request gated again",
      );
      expect((await decisionOf(head)).baseline).toMatchObject({ found: true, commit_sha: main });
      expect(github.currentCheckRun(REPOSITORY.full_name, head)!.conclusion).toBe("action_required");
    });
  });

  describe("a second review: files too large to read", () => {
    it("leaves a spec file over 10 MB unread, failing the check run at that file", async () => {
      const head = headCommit({ ...files(), ".assure/specs/huge.yaml": `# ${"x".repeat(11 * 1024 * 1024)}\n` });
      await openPullRequest(head);
      const run = await checkRun(head);
      expect(run.conclusion).toBe("failure");
      expect(run.annotations).toContainEqual(
        expect.objectContaining({
          path: ".assure/specs/huge.yaml",
          message: expect.stringMatching(/bytes; the App reads files of at most 10485760$/),
        }),
      );
    });
  });

  describe("finding 3: a case's conversation is part of its policy", () => {
    it("holds a head that only rewrites the failing scenario's user turn until a writer approves it", async () => {
      const head = headCommit(files(guardedSpec((spec) => (spec.scenarios.at(-1)!.turns[0]!.user = "Hello there."))));
      await openPullRequest(head);
      const run = await checkRun(head);
      expect(run.conclusion).toBe("action_required");
      expect(run.output.summary).toContain("the conversation of 'account-deletion' is changed");
      const decision = await decisionOf(head);
      expect(decision.policy_changes).toEqual([
        expect.objectContaining({ kind: "changed", where: "refund-agent-deterministic: scenarios[2]" }),
      ]);
      // The rewritten case passes: only the policy gate holds it.
      expect(
        decision.reasons.filter((r: { blocking: boolean }) => r.blocking).map((r: { gate_id: string }) => r.gate_id),
      ).toEqual(["policy"]);
    });
  });

  describe("finding 4: a fork's head gated through its check suite is a fork's", () => {
    it("skips a fork's head that comes with head_branch null, whether or not GitHub lists its pull request", async () => {
      const calls = agent.requests;
      for (const listed of [false, true]) {
        const head = nextSha();
        github.commit(
          REPOSITORY.full_name,
          head,
          files(
            guardedSpec((spec) => spec.scenarios.pop()),
            { forks: "run" },
          ),
          { parents: [main] },
        );
        // The base branch (main) says forks: skip.
        github.commit(REPOSITORY.full_name, main, files(guardedSpec(), { forks: "skip" }), {
          committed_at: "2026-11-23T10:00:00Z",
          branch: "main",
        });
        if (listed) {
          github.pullRequest(REPOSITORY.full_name, ++numbers, {
            author: "stranger",
            head: { sha: head, ref: "patch-1", repo: { id: 999, full_name: "stranger/guarded" } },
            base: { sha: main },
          });
        }
        await github.deliver(t.baseUrl, "check_suite", checkSuiteEvent(REPOSITORY, { head, branch: null }));
        const run = await checkRun(head);
        expect(run).toMatchObject({
          conclusion: "action_required",
          output: { title: "Skipped: pull requests from forks are not tested" },
        });
        expect(await decisionOf(head)).toBeUndefined();
      }
      expect(agent.requests).toBe(calls);
      github.commit(REPOSITORY.full_name, main, files(), { committed_at: "2026-11-23T10:00:00Z", branch: "main" });
    });
  });

  describe("finding 13: one check run per commit and decision revision", () => {
    it("leaves one check run after a pull request, its reopening and its check suite", async () => {
      const head = headCommit(files());
      const number = ++numbers;
      await github.deliver(
        t.baseUrl,
        "pull_request",
        pullRequestEvent(REPOSITORY, { head, base: main, number, branch: `feature-${number}` }),
      );
      const first = await checkRun(head);
      // Later, its links are signed anew (another expiry): what the check run says is the same all the same.
      clock.advance(5000);
      await github.deliver(
        t.baseUrl,
        "pull_request",
        pullRequestEvent(REPOSITORY, { action: "reopened", head, base: main, number, branch: `feature-${number}` }),
      );
      await github.deliver(
        t.baseUrl,
        "check_suite",
        checkSuiteEvent(REPOSITORY, { head, branch: `feature-${number}`, pullRequest: number }),
      );
      await waitFor(async () => {
        const [commit] = await t.service.store.listGitHubCommitsOfSha(REPOSITORY.id, head);
        return commit?.revision === 3 && commit.synced_revision === 3;
      }, "both deliveries gated and synced");
      expect(github.checkRuns(REPOSITORY.full_name, head).map((run) => run.id)).toEqual([first.id]);
    });
  });
});
