import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import {
  checkRunEvent,
  checkSuiteEvent,
  pullRequestEvent,
  pushEvent,
  type TestRepository,
} from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn, type StandInCheckRun } from "../../../examples/github/stand-in.js";
import { EXAMPLE_SPEC_YAML, PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";
import type { ApiClient } from "../../helpers/api-client.js";

const PUBLIC_BASE_URL = "https://assure.example.test";
const REPOSITORY: TestRepository = {
  id: 424242,
  full_name: "acme/refunds",
  default_branch: "main",
  installationId: 31337,
};
const UNBOUND: TestRepository = {
  id: 515151,
  full_name: "acme/unbound",
  default_branch: "main",
  installationId: 31337,
};
const BASE_SHA = "b".repeat(40);
let shas = 0;
const nextSha = () => `c${(++shas).toString(16).padStart(39, "0")}`;

const config = (
  project: string,
  runs: { specs: string[]; environments: string[] }[] = [
    { specs: [".assure/specs/*.yaml"], environments: ["staging"] },
  ],
) => stringify({ version: 1, project, runs });

describe("the release gate in pull requests", () => {
  let github: GitHubStandIn;
  let t: TestService;
  let agent: ExampleAgent;
  let client: ApiClient;
  let projectId: string;

  beforeAll(async () => {
    github = await startGitHubStandIn();
    agent = await startExampleAgent();
    t = await startTestService({
      env: {
        ...github.env,
        ASSURE_BASE_URL: PUBLIC_BASE_URL,
        ASSURE_WORKERS: "4",
        ASSURE_GITHUB_RECONCILE_MS: "100",
        ASSURE_GITHUB_RETRY_BASE_MS: "10",
      },
    });
    github.addRepository(REPOSITORY);
    github.addRepository(UNBOUND);
    const project = await t.admin.post("/v1/projects", {
      name: "refunds",
      repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
    });
    projectId = project.body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "2.0.0" })).body.agent_id;
    for (const [name, model] of [
      ["staging", "refund-agent"],
      ["sloppy", "refund-agent+wrong-arguments"],
    ]) {
      await client.post("/v1/environments", {
        name,
        agent_id: agentId,
        endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model },
      });
    }
    github.commit(REPOSITORY.full_name, BASE_SHA, {
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
  });
  afterEach(() => {
    // Every request the App made must match GitHub's published description.
    expect(github.problems).toEqual([]);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
    await github.close();
  });

  const completed = (sha: string, repository = REPOSITORY) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(repository.full_name, sha);
        return run?.status === "completed" ? run : undefined;
      },
      `a completed check run on ${sha.slice(0, 7)}`,
      { timeoutMs: 30_000 },
    );
  const openPullRequest = async (files: Record<string, string>, options: { number?: number } = {}) => {
    const head = nextSha();
    github.commit(REPOSITORY.full_name, head, files);
    const delivered = await github.deliver(
      t.baseUrl,
      "pull_request",
      pullRequestEvent(REPOSITORY, { head, base: BASE_SHA, ...options }),
    );
    expect(delivered.status).toBe(200);
    return head;
  };
  const relative = (url: string) => url.replace(PUBLIC_BASE_URL, "");

  it("publishes success for an agent whose gates pass: one check run, completed, linking the decision", async () => {
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const run = await completed(head);
    expect(run).toMatchObject({ name: "assure/release-gate", conclusion: "success", annotations: [] });
    expect(run.output.title).toBe("Release allowed: 1 of 1 gate passed");
    expect(run.output.summary).toContain("Release allowed");
    expect(run.actions.map((a) => a.identifier)).toEqual(["rerun"]);
    expect(github.checkRuns(REPOSITORY.full_name, head)).toHaveLength(1);

    // Details opens the decision's page, signed: a reviewer needs no API key.
    expect(run.details_url).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL}/decisions/${run.external_id}\\?exp=\\d+&sig=[\\w-]{43}$`),
    );
    const page = await fetch(`${t.baseUrl}${relative(run.details_url!)}`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const decision = (await client.get(`/v1/release-decisions/${run.external_id}`)).body;
    expect(decision).toMatchObject({
      decision_id: run.external_id,
      status: "ALLOWED",
      subject: { repository: REPOSITORY.full_name, commit_sha: head },
    });
    const [planned] = decision.runs;
    expect((await client.get(`/v1/runs/${planned.run_id}`)).body.source).toEqual({
      repository: REPOSITORY.full_name,
      commit_sha: head,
      ref: "refs/heads/feature",
      pull_request: 7,
    });
    const spec = (await client.get(`/v1/test-specs/${planned.test_spec_id}`)).body;
    expect(spec).toMatchObject({
      spec_version: expect.stringMatching(/^git:[0-9a-f]{40}$/),
      source: { path: ".assure/specs/refund.yaml" },
    });
  });

  it("publishes failure for a sloppy agent, with annotations at the spec lines whose evidence resolves", async () => {
    const spec = deterministicSpecYaml({ repeat: 1 });
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId, [{ specs: [".assure/specs/refund.yaml"], environments: ["sloppy"] }]),
      ".assure/specs/refund.yaml": spec,
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.output.title).toBe("Release blocked: 1 of 1 gate failed");
    expect(run.annotations.length).toBeGreaterThan(0);
    const lines = spec.split("\n");
    // The summary names each failed check: its case, the check as written, its spec line, and what the agent did.
    const named = [
      ...run.output.summary!.matchAll(
        /^- ❌ `[\w-]+` `((?:tool_called|tool_sequence|response)[^`]*)` at `\.assure\/specs\/refund\.yaml:(\d+)`: failed, `[^`]+` \(\[evidence\]\(https:\/\/assure\.example\.test\S+\)\)\n {2}- repeat 1, turn \d+: (?:said `[^`]*`|no reply); (?:called `lookup_order\([^`]*\)`|called no tool)$/gm,
      ),
    ];
    expect(named.length).toBeGreaterThan(0);
    for (const [, check, line] of named) expect(lines[Number(line) - 1]).toContain(check!.split(" ")[0]);
    for (const annotation of run.annotations) {
      expect(annotation).toMatchObject({ path: ".assure/specs/refund.yaml", annotation_level: "failure" });
      // The line holds the expectation that failed (a tool_called on wrong arguments).
      expect(lines[annotation.start_line - 1]).toMatch(/tool_called|tool_sequence|response/);
      // Each link opens the run's page (signed) at the element that shows the evidence.
      const refs = annotation.message.match(/https:\/\/assure\.example\.test\S+/g)!;
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) {
        expect(ref).toMatch(/\/runs\/run_\w+\?exp=\d+&sig=[\w-]+&find=[\w-]+#[\w-]+$/);
        const page = await fetch(`${t.baseUrl}${relative(ref)}`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain(`id="${ref.split("#")[1]}"`);
      }
    }
  });

  it("publishes action_required when a gate is inconclusive: no judge is configured for a metric", async () => {
    const spec = parse(EXAMPLE_SPEC_YAML) as {
      name: string;
      defaults: Record<string, number>;
      security?: unknown;
      gates: { id: string }[];
    };
    spec.defaults.repeat = 1;
    delete spec.security;
    spec.gates = spec.gates.filter((gate) => gate.id !== "SEC");
    const text = stringify(spec);
    const head = await openPullRequest({ ".assure/config.yml": config(projectId), ".assure/specs/refund.yaml": text });
    const run = await completed(head);
    expect(run.conclusion).toBe("action_required");
    expect(run.output.title).toBe("Release blocked: 1 gate inconclusive");
    // The metric's gate, which no evaluation explains, is shown at its own line.
    const gateLine = text.split("\n").findIndex((line) => line.includes("id: TASK")) + 1;
    expect(run.annotations).toEqual([
      expect.objectContaining({
        annotation_level: "warning",
        start_line: gateLine,
        title: expect.stringContaining("gate TASK inconclusive"),
      }),
    ]);
  });

  it("shows the security coverage table, and fails a coverage gate naming the categories not probed", async () => {
    const spec = parse(deterministicSpecYaml({ repeat: 1 })) as { security?: unknown; gates: unknown[] };
    spec.security = [{ family: "system-prompt-leakage" }];
    spec.gates.push({ id: "COV", require: { coverage: "owasp-llm-2025" } });
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": stringify(spec),
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    const summary = run.output.summary!;
    expect(summary).toMatch(
      /^\| COV \| failed \| 6 of 7 owasp-llm-2025 categories not probed: LLM01, LLM02, LLM05, LLM06, LLM09, LLM10 \|/m,
    );
    expect(summary).toContain("<summary>Security coverage: 1 of 10 categories probed</summary>");
    expect(summary).toMatch(/^\| LLM07 System Prompt Leakage \| [1-9]\d* \| 0 \| 0 \| {2}\|$/m);
    expect(summary).toMatch(/^\| LLM01 Prompt Injection \| 0 \| 0 \| 0 \| no probe in the spec names it \|$/m);
  });

  it("gates one commit once, however it is announced: a repeated delivery, and a pull request with its check suite", async () => {
    const head = nextSha();
    github.commit(REPOSITORY.full_name, head, {
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const event = pullRequestEvent(REPOSITORY, { head, base: BASE_SHA });
    const first = await github.deliver(t.baseUrl, "pull_request", event);
    await github.deliver(t.baseUrl, "pull_request", event, { delivery: first.delivery });
    await github.deliver(t.baseUrl, "check_suite", checkSuiteEvent(REPOSITORY, { head, pullRequest: 7 }));
    await completed(head);
    const decisions = (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${head}`))
      .body.data;
    expect(decisions).toHaveLength(1);
    expect(decisions[0].runs).toHaveLength(1);
    const runs = (await client.get(`/v1/runs?limit=200`)).body.data.filter(
      (r: { source: { commit_sha?: string } | null }) => r.source?.commit_sha === head,
    );
    expect(runs).toHaveLength(1);
    expect(github.checkRuns(REPOSITORY.full_name, head)).toHaveLength(1);
  });

  it("sends 120 failing checks as annotations in 3 requests, before completing", async () => {
    const spec = parse(deterministicSpecYaml({ repeat: 1 })) as {
      name: string;
      scenarios: { turns: { expect?: unknown[] }[]; expect?: unknown[] }[];
    };
    spec.name = "many-failures";
    spec.scenarios = [spec.scenarios[0]!];
    spec.scenarios[0]!.expect = [];
    spec.scenarios[0]!.turns = [
      {
        ...spec.scenarios[0]!.turns[0]!,
        expect: Array.from({ length: 120 }, (_, i) => ({
          tool_called: { name: "lookup_order", args: { order_id: `X-${i}` } },
        })),
      },
    ];
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId),
      ".assure/specs/many.yaml": stringify(spec),
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.annotations).toHaveLength(120);
    expect(run.annotationRequests).toEqual([50, 50, 20]);
    // The summary names the first 20 and links the evidence for the rest.
    expect(run.output.summary!.match(/^- ❌ /gm)).toHaveLength(20);
    expect(run.output.summary).toMatch(/^- and 100 more checks not passed: \[the evidence\]\(https:\/\/\S+\)$/m);
  });

  it("turns the current check run green when a reviewer waives the failed gate (a new check run: a completed one cannot change)", async () => {
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId, [{ specs: [".assure/specs/refund.yaml"], environments: ["sloppy"] }]),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const failed = await completed(head);
    expect(failed.conclusion).toBe("failure");
    const decision = (await client.get(`/v1/release-decisions/${failed.external_id}`)).body;
    const reviewer = t.admin.withToken(await t.issueKey(projectId, ["releases:read", "releases:waive"]));
    const waiver = await reviewer.post(`/v1/release-decisions/${decision.decision_id}/waivers`, {
      run_id: decision.runs[0].run_id,
      gate_id: "DET",
      reason: "accepted for the demo",
    });
    expect(waiver.status).toBe(201);
    const current = await waitFor(() => {
      const run = github.currentCheckRun(REPOSITORY.full_name, head);
      return run && run.id !== failed.id && run.status === "completed" ? run : undefined;
    }, "a new check run after the waiver");
    expect(current).toMatchObject({
      conclusion: "success",
      external_id: decision.decision_id,
      output: { title: "Release allowed: 0 of 1 gate passed, 1 waived" },
    });
    expect(github.checkRuns(REPOSITORY.full_name, head).map((run) => run.conclusion)).toEqual(["failure", "success"]);
  });

  it("starts a commit's runs again on a re-run (the button, by a writer; or GitHub's own), in a new check run", async () => {
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const first = await completed(head);
    github.setPermission(REPOSITORY.full_name, "reader", "read");
    github.setPermission(REPOSITORY.full_name, "maintainer", "write");

    // A reader's press starts nothing.
    await github.deliver(
      t.baseUrl,
      "check_run",
      checkRunEvent(REPOSITORY, {
        action: "requested_action",
        name: first.name,
        head,
        identifier: "rerun",
        sender: "reader",
      }),
    );
    await waitFor(async () => (await t.service.store.countRows()).jobs === 0, "the press to be processed");
    expect(github.checkRuns(REPOSITORY.full_name, head)).toHaveLength(1);

    await github.deliver(
      t.baseUrl,
      "check_run",
      checkRunEvent(REPOSITORY, {
        action: "requested_action",
        name: first.name,
        head,
        identifier: "rerun",
        sender: "maintainer",
      }),
    );
    const second = await waitFor(() => {
      const run = github.currentCheckRun(REPOSITORY.full_name, head);
      return run && run.id !== first.id && run.status === "completed" ? run : undefined;
    }, "a second check run");
    expect(second.conclusion).toBe("success");
    await github.deliver(
      t.baseUrl,
      "check_suite",
      checkSuiteEvent(REPOSITORY, { action: "rerequested", head, pullRequest: 7 }),
    );
    await waitFor(
      () => github.checkRuns(REPOSITORY.full_name, head).filter((run) => run.status === "completed").length === 3,
      "a third check run",
    );
    const decision = (await client.get(`/v1/release-decisions/${second.external_id}`)).body;
    expect(decision.attempt).toBe(3);
    expect(decision.runs.map((run: { attempt: number }) => run.attempt)).toEqual([1, 2, 3]);
  });

  it("fails the check run of a bad config, with an annotation at the bad line", async () => {
    const bad = `version: 1\nproject: ${projectId}\nruns:\n  - specs: [".assure/specs/*.yaml"]\n    environments: [staging]\n    typo: true\n`;
    const head = await openPullRequest({
      ".assure/config.yml": bad,
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.output.title).toBe(".assure/config.yml is not valid");
    expect(run.annotations).toEqual([
      expect.objectContaining({ path: ".assure/config.yml", start_line: 4, message: expect.stringContaining("typo") }),
    ]);
  });

  it("refuses a config that names no project (one written for local runs), saying so at its first line", async () => {
    const local = `version: 1\nruns:\n  - specs: [".assure/specs/*.yaml"]\n    environments: [staging]\n`;
    const head = await openPullRequest({
      ".assure/config.yml": local,
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.output.title).toBe(".assure/config.yml is not valid");
    expect(run.output.summary).toContain("a config without one serves local runs (assure test) only");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".assure/config.yml",
        start_line: 1,
        message: expect.stringContaining("no project is named"),
      }),
    ]);
  });

  it("fails the check run of a spec that is not valid, and of an environment the project does not have", async () => {
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId, [
        { specs: [".assure/specs/*.yaml"], environments: ["staging", "production"] },
      ]),
      ".assure/specs/broken.yaml":
        'schema_version: "1"\nname: broken\nscenarios:\n  - id: s\n    turns: []\ngates:\n  - id: DET\n    require: { expectations: all }\n',
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    expect(run.annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: ".assure/specs/broken.yaml", start_line: 5 }),
        expect.objectContaining({
          path: ".assure/config.yml",
          message: expect.stringContaining("environment 'production' does not exist"),
        }),
      ]),
    );
  });

  it("refuses to gate a repository the project does not list, and says so", async () => {
    const head = nextSha();
    github.commit(UNBOUND.full_name, head, {
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(UNBOUND, { head, base: nextSha() }));
    const run = await completed(head, UNBOUND);
    expect(run.conclusion).toBe("failure");
    expect(run.output.title).toBe("The repository is not bound to the project");
    expect(run.annotations[0]).toMatchObject({
      path: ".assure/config.yml",
      start_line: 2,
      message: expect.stringContaining("does not list acme/unbound"),
    });
    expect((await client.get(`/v1/release-decisions?repository=${UNBOUND.full_name}`)).body.data).toEqual([]);
  });

  it("publishes no check run for a repository that does not use assure", async () => {
    const head = nextSha();
    const base = nextSha();
    github.commit(REPOSITORY.full_name, base, { "README.md": "no assure here" });
    github.commit(REPOSITORY.full_name, head, { "README.md": "still none" });
    const before = (await t.service.store.countRows()).github_commits;
    await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base }));
    await waitFor(async () => (await t.service.store.countRows()).jobs === 0, "the delivery to be processed");
    expect(github.checkRuns(REPOSITORY.full_name, head)).toEqual([]);
    expect((await t.service.store.countRows()).github_commits).toBe(before);
  });

  it("fails when the head drops the config the base branch has", async () => {
    const head = await openPullRequest({ "README.md": "config removed" });
    const run: StandInCheckRun = await completed(head);
    expect(run).toMatchObject({ conclusion: "failure", output: { title: ".assure/config.yml is missing" } });
  });

  it("publishes through GitHub's 5xx: more failures than Octokit retries, then one check run all the same", async () => {
    const createCheckRun = "POST /repos/{owner}/{repo}/check-runs";
    const attempts = () =>
      github.requests.filter((r) => r.method === "POST" && /^\/repos\/acme\/refunds\/check-runs$/.test(r.path)).length;
    const before = attempts();
    github.failNext(createCheckRun, 6);
    const head = await openPullRequest({
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    const run = await completed(head);
    expect(run.conclusion).toBe("success");
    // Octokit tries a request 4 times; the 7th attempt, in the publishing job's next try, got through.
    expect(attempts() - before).toBeGreaterThanOrEqual(7);
    expect(github.checkRuns(REPOSITORY.full_name, head)).toHaveLength(1);
  });

  it("decides every commit pushed to the default branch", async () => {
    const head = nextSha();
    github.commit(REPOSITORY.full_name, head, {
      ".assure/config.yml": config(projectId),
      ".assure/specs/refund.yaml": deterministicSpecYaml({ repeat: 1 }),
    });
    await github.deliver(t.baseUrl, "push", pushEvent(REPOSITORY, { after: head }));
    const run = await completed(head);
    expect(run.conclusion).toBe("success");
    const decision = (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${head}`))
      .body.data[0];
    expect(decision.status).toBe("ALLOWED");
    expect((await client.get(`/v1/runs/${decision.runs[0].run_id}`)).body.source).toEqual({
      repository: REPOSITORY.full_name,
      commit_sha: head,
      ref: "refs/heads/main",
    });
  });
});
