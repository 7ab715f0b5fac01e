import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { parse, stringify } from "yaml";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import type { ApiClient } from "../../helpers/api-client.js";
import { waitForRun } from "../../helpers/runs.js";
import { PROJECT_SCOPES, deterministicSpecYaml, seedProject, type SeededProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { waitFor } from "../../helpers/wait.js";

const REPOSITORY = "acme/refunds";
let shas = 0;
const nextSha = () => `c${(++shas).toString(16).padStart(39, "0")}`;

/** The deterministic spec at repeat 5, with a gate that compares it with the base branch. */
function specWithNoRegression(): string {
  const spec = parse(deterministicSpecYaml({ repeat: 5 })) as { gates: unknown[] };
  spec.gates.push({
    id: "NOREG",
    title: "No regression against main",
    require: { no_regression: { max_drop: 0.05, confidence: 0.95 } },
  });
  return stringify(spec);
}

describe("a pull request's decision compared with its base branch", () => {
  let t: TestService;
  let agent: ExampleAgent;
  let p: SeededProject;
  let ci: ApiClient;
  let reviewer: ApiClient;

  beforeAll(async () => {
    t = await startTestService({ env: { ASSURE_WORKERS: "4" } });
    agent = await startExampleAgent();
    p = await seedProject(t, agent.baseUrl, { specYaml: specWithNoRegression() });
    ci = t.admin.withToken(await t.issueKey(p.projectId, [...PROJECT_SCOPES, "releases:read", "releases:write"]));
    reviewer = t.admin.withToken(await t.issueKey(p.projectId, ["releases:read", "releases:waive", "evidence:read"]));
  });
  afterEach(() => agent.behave([]));
  afterAll(async () => {
    await t.close();
    await agent.close();
  });

  const plan = () => [{ test_spec_id: p.testSpecId, environment_id: p.environmentId }];
  /** Runs the commit's spec and decides it, with its base branch's chain when it is a pull request's head. */
  async function decided(sha: string, base?: Record<string, unknown>) {
    const created = await ci.post("/v1/release-decisions", {
      subject: { repository: REPOSITORY, commit_sha: sha },
      plan: plan(),
      ...(base ? { base } : {}),
    });
    expect(created.status).toBe(201);
    const run = await ci.post(
      "/v1/runs",
      {
        test_spec_id: p.testSpecId,
        environment_id: p.environmentId,
        source: { repository: REPOSITORY, commit_sha: sha },
      },
      { headers: { "idempotency-key": `run-${sha}` } },
    );
    await waitForRun(ci, run.body.run_id);
    return waitFor(async () => {
      const decision = (await ci.get(`/v1/release-decisions/${created.body.decision_id}`)).body;
      return decision.status !== "PENDING" ? decision : undefined;
    }, `the decision of ${sha}`);
  }
  const chain = (...commits: string[]) =>
    commits.map((sha, i) => ({ sha, committed_at: new Date(Date.UTC(2026, 10, 20 - i)).toISOString() }));
  const gate = (decision: { reasons: { gate_id: string | null }[] }, id: string) =>
    decision.reasons.find((r) => r.gate_id === id) as unknown as Record<string, unknown> & {
      reason: string;
      evidence_refs: string[];
      baseline_evidence_refs: string[];
    };

  it("finds a regression when the head's agent is sloppier: the cases, their statistics, and the evidence of both sides", async () => {
    const base = nextSha();
    const baseDecision = await decided(base);
    expect(baseDecision).toMatchObject({ status: "ALLOWED", baseline: null, changes: null });

    agent.behave(["wrong-arguments"]);
    const head = await decided(nextSha(), { ref: "main", commits: chain(base) });
    expect(head.status).toBe("BLOCKED");
    expect(head.baseline).toMatchObject({
      found: true,
      decision_id: baseDecision.decision_id,
      commit_sha: base,
      age_commits: 0,
      warning: null,
      merge_base_sha: base,
    });
    expect(head.changes.counts.regressed).toBeGreaterThan(0);
    const regressed = head.changes.cases.filter((c: { class: string }) => c.class === "regressed");
    expect(regressed[0]).toMatchObject({
      base: { passes: 5, runs: 5 },
      head: { passes: 0, runs: 5 },
      rate_drop: 1,
      gate_ids: ["NOREG"],
    });
    // Fisher's exact test, 5/5 against 0/5, one-sided: 1 / C(10, 5) = 0.004.
    expect(regressed[0].rate_p).toBeCloseTo(1 / 252, 4);
    expect(head.changes.cases.map((c: { class: string }) => c.class)).toEqual(
      [...head.changes.cases.map((c: { class: string }) => c.class)].sort((a, b) =>
        a === "regressed" ? -1 : b === "regressed" ? 1 : 0,
      ),
    );

    const noreg = gate(head, "NOREG");
    expect(noreg).toMatchObject({ status: "failed", blocking: true });
    expect(noreg.reason).toMatch(
      new RegExp(
        `no_regression: ${regressed.length} case\\(s\\) regressed against the baseline ${base.slice(0, 7)}: '.+' passed 5/5 → 0/5 \\(p = 0\\.004\\)`,
      ),
    );
    // Side by side: the head's failed evaluations, the base's passed ones, each readable.
    expect(noreg.evidence_refs[0]).toContain(`/v1/runs/${head.runs[0].run_id}/evaluations/`);
    expect(noreg.baseline_evidence_refs[0]).toContain(`/v1/runs/${baseDecision.runs[0].run_id}/evaluations/`);
    expect((await p.client.get(noreg.evidence_refs[0]!)).body.status).toBe("failed");
    expect((await p.client.get(noreg.baseline_evidence_refs[0]!)).body.status).toBe("passed");

    // What each side's agent used, from each run's evidence, and the change.
    const [usage] = head.changes.usage;
    const detail = async (runId: string) => (await p.client.get(`/v1/runs/${runId}/evidence`)).body;
    const [headEvidence, baseEvidence] = await Promise.all([
      detail(head.runs[0].run_id),
      detail(baseDecision.runs[0].run_id),
    ]);
    expect(usage).toEqual({
      run_id: head.runs[0].run_id,
      base_run_id: baseDecision.runs[0].run_id,
      tokens: {
        base: baseEvidence.usage.total_tokens,
        head: headEvidence.usage.total_tokens,
        change:
          Math.round(
            ((headEvidence.usage.total_tokens - baseEvidence.usage.total_tokens) / baseEvidence.usage.total_tokens) *
              1e4,
          ) / 1e4,
      },
      cost_usd: { base: null, head: null, change: null }, // the environment prices nothing: unknown, never zero
      latency_ms_p95: {
        base: baseEvidence.usage_detail.latency_ms_p95,
        head: headEvidence.usage_detail.latency_ms_p95,
        change: expect.any(Number),
      },
    });
  });

  it("finds no regression when the same erratic agent answers both sides: drops within noise are inconclusive, and do not block", async () => {
    agent.behave(["erratic"]);
    const base = nextSha();
    await decided(base);
    const head = await decided(nextSha(), { commits: chain(nextSha(), base) });
    expect(head.baseline).toMatchObject({ found: true, commit_sha: base, age_commits: 1 });
    expect(gate(head, "DET").status).toBe("failed"); // the agent did err, on both sides
    expect(head.changes.counts.regressed).toBe(0);
    expect(gate(head, "NOREG")).toMatchObject({ status: "passed", blocking: false });
    expect(gate(head, "NOREG").reason).toMatch(/^no_regression: no case regressed against the baseline/);
    for (const unsure of head.changes.cases.filter((c: { class: string }) => c.class === "inconclusive")) {
      expect(unsure.rate_p).toBeGreaterThanOrEqual(0.05);
      expect(unsure.rate_drop).toBeGreaterThan(0.05);
    }
  });

  it("says when there is no baseline, and compares nothing: it never invents one", async () => {
    const undecided = [nextSha(), nextSha()];
    const head = await decided(nextSha(), { commits: chain(...undecided), settings: { baseline: { depth: 2 } } });
    expect(head.baseline).toMatchObject({ found: false, decision_id: null, merge_base_sha: undecided[0] });
    expect(head.baseline.reason).toContain(
      `no decision on the base branch within 2 commit(s) of the merge base ${undecided[0]!.slice(0, 7)}`,
    );
    expect(head.changes).toBeNull();
    expect(gate(head, "NOREG")).toMatchObject({ status: "passed" });
    expect(gate(head, "NOREG").reason).toMatch(/^no_regression: no baseline to compare with/);
    expect(head.status).toBe("ALLOWED");
  });

  it("warns when the baseline is older than baseline.max_age_days", async () => {
    const old = nextSha();
    await decided(old);
    const head = await decided(nextSha(), {
      commits: [
        { sha: nextSha(), committed_at: "2026-11-20T00:00:00Z" },
        { sha: old, committed_at: "2026-10-01T00:00:00Z" },
      ],
      settings: { baseline: { max_age_days: 14 } },
    });
    expect(head.baseline).toMatchObject({ found: true, commit_sha: old, age_commits: 1, age_days: 50 });
    expect(head.baseline.warning).toContain("50 days older than the merge base");
  });

  it("blocks a head that changes the policy until a reviewer waives the gate 'policy', and records who did", async () => {
    const base = nextSha();
    await decided(base);
    const policy_changes = [
      {
        kind: "removed",
        where: "refund-agent-deterministic: scenarios[1]",
        message: "the scenario 'unknown-order' is removed",
      },
    ];
    const head = await decided(nextSha(), { commits: chain(base), policy_changes });
    expect(head).toMatchObject({
      status: "BLOCKED",
      policy_changes,
      change_settings: { policy_changes: "require_approval" },
    });
    expect(gate(head, "policy")).toMatchObject({ run_id: null, status: "failed", blocking: true });
    expect(gate(head, "policy").reason).toContain("the scenario 'unknown-order' is removed");

    const asWaiver = await reviewer.post(`/v1/release-decisions/${head.decision_id}/waivers`, {
      run_id: head.runs[0].run_id,
      gate_id: "policy",
      reason: "x",
    });
    expect(asWaiver.status).toBe(422);
    expect(asWaiver.body.error.code).toBe("NOT_WAIVABLE");
    expect(asWaiver.body.error.message).toContain("policy-approvals");
    expect(
      (await ci.post(`/v1/release-decisions/${head.decision_id}/policy-approvals`, { reason: "mine" })).status,
    ).toBe(403);
    const approval = await reviewer.post(`/v1/release-decisions/${head.decision_id}/policy-approvals`, {
      reason: "The scenario moved to another spec.",
    });
    expect(approval.status).toBe(201);
    expect(approval.body).toMatchObject({
      approval_id: expect.stringMatching(/^apv_/),
      decision_id: head.decision_id,
      created_by: { key_id: expect.stringMatching(/^key_/), github_login: null },
    });
    expect(
      (await reviewer.post(`/v1/release-decisions/${head.decision_id}/policy-approvals`, { reason: "again" })).status,
    ).toBe(409);
    const approved = (await ci.get(`/v1/release-decisions/${head.decision_id}`)).body;
    expect(approved.status).toBe("ALLOWED");
    expect(gate(approved, "policy")).toMatchObject({
      status: "waived",
      blocking: false,
      waiver_ref: expect.stringContaining(approval.body.approval_id),
    });
    expect((await ci.get(`/v1/release-decisions/${head.decision_id}/policy-approvals`)).body.data).toEqual([
      approval.body,
    ]);
    expect((await ci.get(gate(approved, "policy").waiver_ref as string)).body).toEqual(approval.body);
    // An approval is not a waiver of a run's gate: the waivers list leaves it out.
    expect((await ci.get(`/v1/release-decisions/${head.decision_id}/waivers`)).body.data).toEqual([]);

    // Reported only, when the base branch says so.
    const reported = await decided(nextSha(), {
      commits: chain(base),
      policy_changes,
      settings: { policy_changes: "report" },
    });
    expect(reported.status).toBe("ALLOWED");
    expect(gate(reported, "policy")).toMatchObject({ status: "passed", blocking: false });
  });

  it("refuses a base for a decision on runs, and a policy approval where nothing needs one", async () => {
    const sha = nextSha();
    const plain = await decided(sha);
    const onRuns = await ci.post("/v1/release-decisions", {
      subject: { run_ids: [plain.runs[0].run_id] },
      base: { commits: chain(sha) },
    });
    expect(onRuns.status).toBe(400);
    expect(onRuns.body.error.details[0].path).toBe("body.base");
    const nothing = await reviewer.post(`/v1/release-decisions/${plain.decision_id}/policy-approvals`, { reason: "x" });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.code).toBe("NOTHING_TO_APPROVE");
    expect(nothing.body.error.message).toContain("changes no policy");
  });

  describe("flakiness over the base branch's last decisions", () => {
    /** The base branch's history, oldest first: the agent errs on every other commit, so the cases it errs on flip each time. */
    async function flippingHistory() {
      const commits: string[] = [];
      for (const behaviours of [["wrong-arguments"], [], ["wrong-arguments"], []] as const) {
        agent.behave(behaviours);
        const sha = nextSha();
        await decided(sha);
        commits.unshift(sha);
      }
      agent.behave(["wrong-arguments"]);
      return commits;
    }

    it("labels a case that flips on the base branch with its history, and blocks as usual in report mode", async () => {
      const commits = await flippingHistory();
      const head = await decided(nextSha(), { commits: chain(...commits) });
      expect(head.status).toBe("BLOCKED");
      expect(head.change_settings.flaky).toEqual({ threshold: 0.2, mode: "report" });
      expect(head.changes.flaky.length).toBeGreaterThan(0);
      for (const f of head.changes.flaky) {
        expect(f).toMatchObject({
          run_id: head.runs[0].run_id,
          history: "FPFP",
          flips: 3,
          pairs: 3,
          flip_rate: 1,
          quarantined: false,
        });
      }
      const regressed = head.changes.cases.filter((c: { class: string }) => c.class === "regressed");
      expect(regressed.length).toBeGreaterThan(0);
      for (const c of regressed) expect(c.flaky).toMatchObject({ history: "FPFP", quarantined: false });
      expect(gate(head, "DET")).toMatchObject({ status: "failed", blocking: true });
      expect(gate(head, "DET").reason).toContain("flaky on the base branch: '");
      expect(gate(head, "NOREG")).toMatchObject({ status: "failed", blocking: true });
      expect(gate(head, "NOREG").reason).toContain("(flaky: flipped 3 of 3 times on the base branch (FPFP))");
    });

    it("quarantines them when configured: their failures and regressions do not block, and are listed as quarantined", async () => {
      const commits = await flippingHistory();
      const head = await decided(nextSha(), {
        commits: chain(...commits),
        settings: { flaky: { mode: "quarantine" } },
      });
      expect(head.status).toBe("ALLOWED");
      for (const f of head.changes.flaky) expect(f).toMatchObject({ history: "FPFP", quarantined: true });
      expect(gate(head, "DET")).toMatchObject({ status: "quarantined", blocking: false });
      expect(gate(head, "DET").reason).toContain(
        "quarantined, it does not block: every failure it cites is of a case flaky on the base branch",
      );
      expect(gate(head, "NOREG")).toMatchObject({ status: "quarantined", blocking: false });
      expect(gate(head, "NOREG").reason).toMatch(/^no_regression: only cases quarantined as flaky regressed/);
      // Its evidence is still cited: quarantine hides nothing.
      expect(gate(head, "DET").evidence_refs.length).toBeGreaterThan(0);
    });

    it("does not quarantine a case that is steady on the base branch: its failure blocks", async () => {
      agent.behave([]);
      const steady: string[] = [];
      for (let i = 0; i < 3; i++) steady.unshift(nextSha());
      for (const sha of [...steady].reverse()) await decided(sha);
      agent.behave(["wrong-arguments"]);
      const head = await decided(nextSha(), { commits: chain(...steady), settings: { flaky: { mode: "quarantine" } } });
      expect(head.changes.flaky).toEqual([]);
      expect(head.status).toBe("BLOCKED");
      expect(gate(head, "DET")).toMatchObject({ status: "failed", blocking: true });
    });
  });
});
