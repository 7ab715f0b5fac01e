import { describe, expect, it } from "@jest/globals";
import type { GateView } from "../../../app/checks/gate-view.js";
import type { RunReport as RunView } from "../../../server/releases/report/report.js";
import { SUMMARY_LIMIT, renderSummary, renderTitle } from "../../../app/checks/render-output.js";
import type { DecisionReason, Evaluation, ReleaseDecision } from "../../../server/contract/index.js";
import type { GitHubCommit } from "../../../server/store/github.js";

const absolute = (ref: string) => `https://assure.example.test${ref}`;
const commit = {
  repository: "acme/refunds",
  head_sha: "a".repeat(40),
  check_name: "assure/release-gate",
} as GitHubCommit;

function view(status: ReleaseDecision["status"], reasons: DecisionReason[], runs: RunView[] = []): GateView {
  const decision = {
    decision_id: "dec_1",
    subject: { repository: "acme/refunds", commit_sha: "a".repeat(40) },
    status,
    attempt: 1,
    planned: runs.map((run) => ({ test_spec_id: "tsp_1", environment_id: "env_1", run_id: run.evidence.run_id })),
    reasons,
    links: { self: "/v1/release-decisions/dec_1", events: "", waivers: "" },
  } as unknown as ReleaseDecision;
  return { kind: "decision", commit, decision, runs, approval: null };
}
const reason = (status: DecisionReason["status"]): DecisionReason => ({
  run_id: "run_1",
  gate_id: "G",
  status,
  blocking: status !== "passed",
  reason: "r",
  evidence_refs: [],
  baseline_evidence_refs: [],
  waiver_ref: null,
});

function hugeRun(): RunView {
  const evaluation = (i: number) =>
    ({
      evaluation_id: `evl_${i}`,
      run_id: "run_1",
      metric_id: "expect.tool_called",
      status: "failed",
      scope: "turn",
      score: 0,
      threshold: 1,
      judge: { provider: "assure", model: "m" },
      reason: "x".repeat(300),
      evidence_refs: [],
    }) as unknown as Evaluation;
  return {
    evidence: {
      run_id: "run_1",
      verdict: "FAIL",
      spec_version: "git:abc",
      agent_version: "1",
      environment: "staging",
      failure: null,
      gates: [],
      links: { self: "/v1/runs/run_1/evidence" },
    } as never,
    specName: "refund",
    specPath: ".assure/specs/refund.yaml",
    lines: {},
    environmentName: "staging",
    unmet: Array.from({ length: 2000 }, (_, i) => evaluation(i)),
    failures: Array.from({ length: 2000 }, (_, i) => ({
      case: `case-${i}`,
      check: "expect.tool_called",
      kind: "expectation",
      metric_id: "expect.tool_called",
      spec_path: null,
      line: i,
      status: "failed" as const,
      reason: "x".repeat(300),
      evaluation_ids: [`evl_${i}`],
      excerpts: [
        {
          conversation_id: `cnv_${i}`,
          scenario_id: `case-${i}`,
          repeat_index: 1,
          turn: 1,
          reply: "y".repeat(5000),
          tool_calls: [{ name: "lookup_order", arguments_raw: "z".repeat(5000) }],
        },
      ],
    })),
    findings: [],
  };
}

describe("check run output", () => {
  it("titles say what was decided, in numbers, within 70 characters", () => {
    expect(
      renderTitle(view("BLOCKED", [reason("failed"), reason("failed"), reason("passed"), reason("inconclusive")])),
    ).toBe("Release blocked: 2 of 4 gates failed, 1 gate inconclusive");
    expect(renderTitle(view("ALLOWED", [reason("passed"), reason("waived")]))).toBe(
      "Release allowed: 1 of 2 gates passed, 1 waived",
    );
    const long = renderTitle(
      view("BLOCKED", [
        reason("failed"),
        reason("inconclusive"),
        reason("error"),
        { ...reason("untested"), gate_id: null },
      ]),
    );
    expect(long.length).toBeLessThanOrEqual(70);
    expect(long).toMatch(/^Release blocked: .*…$/);
  });

  it("keeps the summary under GitHub's limit, saying what was cut and where to read it all", () => {
    const summary = renderSummary(
      view("BLOCKED", [reason("failed")], Array.from({ length: 20 }, hugeRun)),
      absolute,
      1800,
    );
    expect(summary.length).toBeLessThanOrEqual(SUMMARY_LIMIT);
    expect(summary).toMatch(
      /lines? cut to fit; the whole decision: https:\/\/assure\.example\.test\/v1\/release-decisions\/dec_1/,
    );
    expect(summary).toContain("1800 more annotations not shown");
  });

  it("lists the cases flaky on the base branch, with their history, and counts quarantined gates in the title", () => {
    const flaky = {
      run_id: "run_1",
      case_id: "full-refund turns[1].expect[0]",
      flip_rate: 1,
      flips: 3,
      pairs: 3,
      history: "FPFP",
      quarantined: true,
    };
    const quarantined = { ...reason("quarantined"), blocking: false };
    const v = view("ALLOWED", [reason("passed"), quarantined]);
    Object.assign(v.kind === "decision" ? v.decision : {}, {
      baseline: {
        found: true,
        decision_id: "dec_0",
        commit_sha: "b".repeat(40),
        age_commits: 0,
        age_days: 0,
        warning: null,
        reason: null,
        merge_base_sha: "b".repeat(40),
      },
      changes: {
        counts: { regressed: 1, improved: 0, unchanged: 4, inconclusive: 0, new: 0, removed: 0 },
        cases: [],
        cases_left_out: 0,
        flaky: [flaky],
        usage: [],
      },
      change_settings: { flaky: { threshold: 0.2, mode: "quarantine" } },
      policy_changes: [],
    });
    expect(renderTitle(v)).toBe("Release allowed: 1 of 2 gates passed, 1 quarantined");
    const summary = renderSummary(v, absolute, 0);
    expect(summary).toContain(
      "**Flaky on the base branch** (flip rate above 0.2; quarantined: their failures do not block):",
    );
    expect(summary).toContain(
      "- `full-refund turns[1].expect[0]`: flipped 3 of 3 times, `FPFP` (oldest first), quarantined",
    );
  });
});
