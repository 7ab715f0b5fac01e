import { describe, expect, it } from "@jest/globals";
import { marked } from "marked";
import type { Evidence, ReleaseDecision } from "../../../server/contract/index.js";
import type { DecisionReport } from "../../../server/releases/report/report.js";
import { renderDecisionSummary } from "../../../server/releases/report/render-markdown.js";
import { COVERAGE, FINDINGS } from "./security-report.fixtures.js";

const absolute = (ref: string) => `https://assure.example.test${ref}`;

function report(findings = FINDINGS, coverage: Evidence["security_coverage"] = COVERAGE): DecisionReport {
  const evidence = {
    run_id: "run_1",
    verdict: "FAIL",
    spec_version: "git:abc",
    agent_version: "1",
    environment: "staging",
    failure: null,
    gates: [],
    security_coverage: coverage,
    links: { self: "/v1/runs/run_1/evidence" },
  } as unknown as Evidence;
  const decision = {
    decision_id: "dec_1",
    subject: { repository: "acme/refunds", commit_sha: "a".repeat(40) },
    status: "BLOCKED",
    attempt: 1,
    planned: [{ test_spec_id: "tsp_1", environment_id: "env_1", run_id: "run_1" }],
    reasons: [],
    policy_changes: [],
    links: { self: "/v1/release-decisions/dec_1" },
  } as unknown as ReleaseDecision;
  const run = {
    evidence,
    specName: "refund",
    specPath: null,
    lines: {},
    environmentName: "staging",
    unmet: [],
    failures: [],
    findings,
  };
  return { decision, runs: [run], approval: null };
}

describe("security in a decision's Markdown (the check run and the job summary)", () => {
  it("lists the findings by OWASP category and carries the coverage table", () => {
    const summary = renderDecisionSummary(report(), absolute, { limit: 65_535 });
    expect(summary).toContain("Findings by category (3):");
    expect(summary).toContain(
      "- LLM01:2025 Prompt Injection (ASI01): **medium** [Followed an instruction in a tool result](https://assure.example.test/v1/runs/run_1/findings/fnd_2)",
    );
    expect(summary).toContain(
      "- LLM07:2025 System Prompt Leakage: **high** [System prompt repeated](https://assure.example.test/v1/runs/run_1/findings/fnd_1); **low** [Rules paraphrased]",
    );
    expect(summary).toContain("<summary>Security coverage: 3 of 4 categories probed</summary>");
    expect(summary).toContain("| LLM07 System Prompt Leakage | 6 | 2 | 1 |  |");
    expect(summary).toContain(
      "| LLM03 Supply Chain | 0 | 0 | 0 | not testable from outside\\: Supply chain\\: no SBOM |",
    );
    // The gates' table, then the coverage one.
    const html = marked.parse(summary, { gfm: true, async: false });
    expect(html.match(/<table>/g)).toHaveLength(2);
  });

  it("keeps a spec's note in the coverage table as text: no HTML, link or cell of its own", () => {
    const hostile = "</details> <img src=x onerror=alert(1)> [c](https://evil.example) | a | https://evil.example";
    const coverage = [{ ...COVERAGE[1]!, not_probed: hostile }];
    const html = marked.parse(renderDecisionSummary(report([], coverage), absolute, { limit: 65_535 }), {
      gfm: true,
      async: false,
    });
    expect(html).not.toMatch(/<img|<\/details>\s*<img|href="https:\/\/evil/);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html.match(/<td>/g)).toHaveLength(5);
  });

  it("links at most five findings of a category and counts the rest, within GitHub's limit", () => {
    const many = Array.from({ length: 400 }, (_, i) => ({ ...FINDINGS[0]!, finding_id: `fnd_${i}` }));
    const summary = renderDecisionSummary(report(many), absolute, { limit: 65_535 });
    expect(summary.match(/findings\/fnd_/g)).toHaveLength(5);
    expect(summary).toContain("; +395 more");
    expect(summary.length).toBeLessThanOrEqual(65_535);
  });

  it("has no security part for a run without probes or findings", () => {
    const summary = renderDecisionSummary(report([], null), absolute, { limit: 65_535 });
    expect(summary).not.toMatch(/Findings|coverage/);
  });
});
