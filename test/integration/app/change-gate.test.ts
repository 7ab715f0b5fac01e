import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { checkRunEvent, pullRequestEvent, pushEvent, type TestRepository } from "../../../examples/github/events.js";
import { startGitHubStandIn, type GitHubStandIn } from "../../../examples/github/stand-in.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { PROJECT_SCOPES, deterministicSpecYaml } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

const PUBLIC_BASE_URL = "https://assure.example.test";
const REPOSITORY: TestRepository = {
  id: 626262,
  full_name: "acme/changes",
  default_branch: "main",
  installationId: 4242,
};
const AUTHOR = "pr-author";
let shas = 0;
const nextSha = () => `d${(++shas).toString(16).padStart(39, "0")}`;
let pullNumbers = 100;

type Spec = { scenarios: { id: string }[]; gates: unknown[] };
/** The deterministic spec at repeat 5, with a gate on no regression against the base branch; `edit` changes it. */
function spec(edit: (spec: Spec) => void = () => {}): string {
  const document = parse(deterministicSpecYaml({ repeat: 5 })) as Spec;
  document.gates.push({ id: "NOREG", require: { no_regression: { max_drop: 0.05, confidence: 0.95 } } });
  edit(document);
  return stringify(document);
}

describe("the release gate on what a pull request changes", () => {
  let github: GitHubStandIn;
  let t: TestService;
  let agent: ExampleAgent;
  let client: ApiClient;
  let projectId: string;
  let main: string; // the base branch's decided commit

  const files = (specText = spec()) => ({
    ".assure/config.yml": stringify({
      version: 1,
      project: projectId,
      runs: [{ specs: [".assure/specs/*.yaml"], environments: ["staging"] }],
    }),
    ".assure/specs/refund.yaml": specText,
  });
  const completed = (sha: string) =>
    waitFor(
      () => {
        const run = github.currentCheckRun(REPOSITORY.full_name, sha);
        return run?.status === "completed" ? run : undefined;
      },
      `a completed check run on ${sha.slice(0, 7)}`,
      { timeoutMs: 30_000 },
    );
  const decisionOf = async (sha: string) =>
    (await client.get(`/v1/release-decisions?repository=${REPOSITORY.full_name}&commit_sha=${sha}`)).body.data[0];
  /** Opens a pull request whose head (one commit on `base`) holds `headFiles`. */
  async function openPullRequest(base: string, headFiles: Record<string, string>) {
    const head = nextSha();
    const number = ++pullNumbers;
    github.commit(REPOSITORY.full_name, head, headFiles, { parents: [base], committed_at: "2026-11-22T10:00:00Z" });
    github.pullRequest(REPOSITORY.full_name, number, { author: AUTHOR });
    expect(
      (await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base, number }))).status,
    ).toBe(200);
    return { head, number };
  }

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
    projectId = (
      await t.admin.post("/v1/projects", {
        name: "changes",
        repositories: [{ github_id: REPOSITORY.id, full_name: REPOSITORY.full_name }],
      })
    ).body.project_id;
    client = t.admin.withToken(await t.issueKey(projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    const agentId = (await client.post("/v1/agents", { name: "refund-agent", version: "2.0.0" })).body.agent_id;
    await client.post("/v1/environments", {
      name: "staging",
      agent_id: agentId,
      endpoint: { protocol: "openai-chat", base_url: agent.baseUrl, model: "refund-agent" },
    });

    // main: a root commit, then the commit the pull requests branch from; a push gates each one.
    const root = nextSha();
    main = nextSha();
    github.commit(REPOSITORY.full_name, root, files(), { committed_at: "2026-11-19T10:00:00Z" });
    github.commit(REPOSITORY.full_name, main, files(), { parents: [root], committed_at: "2026-11-20T10:00:00Z" });
    await github.deliver(t.baseUrl, "push", pushEvent(REPOSITORY, { after: main, branch: "main" }));
    expect((await completed(main)).conclusion).toBe("success");
    github.setPermission(REPOSITORY.full_name, AUTHOR, "write");
    github.setPermission(REPOSITORY.full_name, "reader", "read");
    github.setPermission(REPOSITORY.full_name, "maintainer", "write");
  });
  afterEach(() => {
    agent.behave([]);
    expect(github.problems).toEqual([]);
  });
  afterAll(async () => {
    await t.close();
    await agent.close();
    await github.close();
  });

  it("lists the regressions of a sloppier agent first, with their statistics and both sides' evidence, and fails the gate", async () => {
    agent.behave(["wrong-arguments"]);
    const { head } = await openPullRequest(main, files());
    const run = await completed(head);
    expect(run.conclusion).toBe("failure");
    const summary = run.output.summary!;
    expect(summary).toContain(`Compared with the base branch: baseline \`${main.slice(0, 7)}\``);
    expect(summary).toMatch(/\*\*\d+ regressed\*\*/);
    expect(summary).toMatch(
      /\| `[^`]+` \| ⬇️ regressed \| 5\/5 \| 0\/5 \| 0\.004 \| \[head\]\(https:\/\/assure\.example\.test\/runs\/run_\w+\?exp=\d+&sig=[\w-]+&find=evaluation-\w+#evaluation-\w+\) · \[base\]\(https:\/\/assure\.example\.test\/runs\/run_\w+\?exp=/,
    );
    // The change comes before the gate tables of the runs.
    expect(summary.indexOf("regressed")).toBeLessThan(summary.indexOf("| Gate | Status |"));
    // What the agent used on each side, against the baseline's run.
    expect(summary).toMatch(
      /\| \[head\]\(https:\/\/assure\.example\.test\/runs\/run_\w+\?exp=\d+&sig=[\w-]+\) vs \[base\]\([^)]+\) \| [\d,]+ → [\d,]+ \([+-][\d.]+%\) \| unknown → unknown \| [\d.]+ ms → [\d.]+ ms/,
    );
    const decision = await decisionOf(head);
    expect(decision.baseline).toMatchObject({ found: true, commit_sha: main, age_commits: 0, merge_base_sha: main });
    expect(decision.reasons.find((r: { gate_id: string }) => r.gate_id === "NOREG")).toMatchObject({
      status: "failed",
      blocking: true,
    });
  });

  it("finds no regression when the head's agent is the same", async () => {
    const { head } = await openPullRequest(main, files());
    const run = await completed(head);
    expect(run.conclusion).toBe("success");
    expect(run.output.summary).toContain("**0 regressed**");
    expect((await decisionOf(head)).changes.counts).toMatchObject({ regressed: 0, removed: 0, new: 0 });
  });

  it("says there is no baseline when nothing on the base branch was decided", async () => {
    const undecided = nextSha();
    github.commit(REPOSITORY.full_name, undecided, files(), { committed_at: "2026-11-21T10:00:00Z" });
    const { head } = await openPullRequest(undecided, files());
    const run = await completed(head);
    expect(run.output.summary).toContain("**No baseline**");
    const decision = await decisionOf(head);
    expect(decision.baseline).toMatchObject({ found: false, merge_base_sha: undecided });
    expect(decision.reasons.find((r: { gate_id: string }) => r.gate_id === "NOREG").reason).toMatch(
      /^no_regression: no baseline to compare with/,
    );
  });

  it("blocks a head that deletes a case until a writer other than its author approves; the author's and a reader's presses are refused", async () => {
    const { head } = await openPullRequest(main, files(spec((s) => s.scenarios.splice(1, 1))));
    const blocked = await completed(head);
    expect(blocked.conclusion).toBe("action_required");
    expect(blocked.actions.map((a) => a.identifier)).toEqual(["approve-policy", "rerun"]);
    expect(blocked.output.summary).toContain(
      "Policy changes to the base branch's `.assure/`: **blocking until a writer other than the author approves them**",
    );
    expect(blocked.output.summary).toContain("the scenario 'unknown-order' is removed");

    const press = (sender: string) =>
      github.deliver(
        t.baseUrl,
        "check_run",
        checkRunEvent(REPOSITORY, {
          action: "requested_action",
          name: "assure/release-gate",
          head,
          identifier: "approve-policy",
          sender,
        }),
      );
    await press(AUTHOR);
    await press("reader");
    const refused = await waitFor(() => {
      const run = github.currentCheckRun(REPOSITORY.full_name, head);
      return run?.output.summary?.includes("@reader pressed") ? run : undefined;
    }, "the refused presses on the check run");
    expect(refused.output.summary).toContain(`@${AUTHOR} pressed *Approve policy*`);
    expect(refused.output.summary).toContain("is the pull request's author");
    expect(refused.output.summary).toContain("has read access");
    expect((await decisionOf(head)).status).toBe("BLOCKED");

    await press("maintainer");
    const approved = await waitFor(() => {
      const run = github.currentCheckRun(REPOSITORY.full_name, head);
      return run?.conclusion === "success" ? run : undefined;
    }, "the check run to pass once approved");
    expect(approved.output.summary).toContain("Policy changes to the base branch's `.assure/`: approved");
    expect(approved.output.summary).toContain("Approved by @maintainer");
    const approvals = (
      await client.get(`/v1/release-decisions/${(await decisionOf(head)).decision_id}/policy-approvals`)
    ).body.data;
    expect(approvals).toEqual([expect.objectContaining({ created_by: { key_id: null, github_login: "maintainer" } })]);
  });

  it("refuses the approval of a writer who pushed commits to another's pull request: a change must not approve itself", async () => {
    const head = nextSha();
    const number = ++pullNumbers;
    github.commit(REPOSITORY.full_name, head, files(spec((s) => s.scenarios.splice(1, 1))), {
      parents: [main],
      committed_at: "2026-11-22T10:00:00Z",
      author: "pusher",
    });
    github.pullRequest(REPOSITORY.full_name, number, { author: "teammate" });
    github.setPermission(REPOSITORY.full_name, "pusher", "write");
    await github.deliver(t.baseUrl, "pull_request", pullRequestEvent(REPOSITORY, { head, base: main, number }));
    expect((await completed(head)).conclusion).toBe("action_required");
    await github.deliver(
      t.baseUrl,
      "check_run",
      checkRunEvent(REPOSITORY, {
        action: "requested_action",
        name: "assure/release-gate",
        head,
        identifier: "approve-policy",
        sender: "pusher",
      }),
    );
    const refused = await waitFor(() => {
      const run = github.currentCheckRun(REPOSITORY.full_name, head);
      return run?.output.summary?.includes("@pusher pressed") ? run : undefined;
    }, "the refused press on the check run");
    expect(refused.output.summary).toContain("wrote or committed commits of the pull request");
    expect((await decisionOf(head)).status).toBe("BLOCKED");
  });

  it("needs no approval for a head that only adds cases", async () => {
    const { head } = await openPullRequest(
      main,
      files(spec((s) => s.scenarios.push({ ...s.scenarios[0]!, id: "full-refund-again" }))),
    );
    const run = await completed(head);
    expect(run.conclusion).toBe("success");
    const decision = await decisionOf(head);
    expect(decision.policy_changes).toEqual([]);
    expect(decision.changes.counts.new).toBeGreaterThan(0);
    expect(run.output.summary).not.toContain("Policy changes");
  });
});
