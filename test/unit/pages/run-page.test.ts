import { describe, expect, it } from "@jest/globals";
import type { Evidence, Run, TestSpecDocument } from "../../../server/contract/index.js";
import { renderRunPage, type RunPageData } from "../../../server/pages/run-page.js";
import { COVERAGE, FINDINGS } from "../releases/security-report.fixtures.js";

const run = {
  run_id: "run_1",
  project_id: "prj_1",
  status: "INCONCLUSIVE",
  verdict: "INCONCLUSIVE",
  failure: null,
  test_spec_id: "tsp_1",
  spec_version: "sha256:abc",
  environment_id: "env_1",
  agent_id: "agt_1",
  agent_version: "1.0.0",
  agent_url: null,
  source: null,
  created_at: "2026-11-23T00:00:00Z",
  updated_at: "2026-11-23T00:00:01Z",
  started_at: "2026-11-23T00:00:00Z",
  ended_at: "2026-11-23T00:00:01Z",
  links: {},
} as unknown as Run;
const spec = {
  gates: [{ id: "TASK", require: { metric: "task_completion", min_pass_rate: 0.8, confidence: 0.95 } }],
} as unknown as TestSpecDocument;

function page(overrides: Partial<RunPageData> = {}): string {
  return renderRunPage({
    run,
    evidence: { verdict: "INCONCLUSIVE", gates: [], usage: null, usage_detail: null } as unknown as Evidence,
    spec: { name: "refund-agent", document: spec, file: undefined },
    environmentName: "staging",
    agent: { name: "refund-agent", version: "1.0.0" },
    tallies: [
      {
        kind: "metric",
        metric_id: "task_completion",
        scenario_id: "full-refund",
        spec_path: null,
        passed: 2,
        failed: 1,
        inconclusive: 0,
        errored: 0,
      },
    ],
    caseCounts: { cases: 1, failing: 1 },
    runWide: [],
    findings: [],
    runEvents: [],
    conversations: [],
    paging: { page: 1, pages: 1, total: 0, hrefOfPage: (n) => `/runs/run_1?page=${n}` },
    hrefOf: () => undefined,
    githubWebUrl: "https://github.com",
    ...overrides,
  });
}

describe("a run's page", () => {
  it("gives a metric held to a bar its Wilson interval at the gate's confidence, and how many more repeats would settle it", () => {
    const html = page();
    // 2 of 3 at 95%: [20.8%, 93.9%] straddles the bar of 80%.
    expect(html).toContain("95%: [20.8%, 93.9%]; straddles the bar of 80%: ");
    expect(html).toMatch(/straddles the bar of 80%: \d+ more repeat\(s\) would settle it/);
  });

  it("shows what an agent said as text, never as markup", () => {
    const hostile = {
      ...run,
      failure: {
        cause: "agent_contract_violation",
        message: '<script>alert(1)</script><img src=x onerror="alert(2)">',
      },
    } as unknown as Run;
    const html = page({ run: hostile });
    expect(html).toContain("&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=&quot;alert(2)&quot;>");
    expect(html).not.toMatch(/<script|<img/);
  });

  it("groups the findings by OWASP category, names their ids and attack, and shows the coverage table", () => {
    const evidence = { verdict: "FAIL", gates: [], usage: null, usage_detail: null, security_coverage: COVERAGE };
    const html = page({ evidence: evidence as unknown as Evidence, findings: FINDINGS });
    const headings = [...html.matchAll(/<h3>(.*?)<\/h3>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ""));
    expect(headings).toEqual(["LLM01:2025 Prompt Injection · ASI01 (1)", "LLM07:2025 System Prompt Leakage (2)"]);
    // Most severe first within a category.
    expect(html.indexOf("finding-fnd_1")).toBeLessThan(html.indexOf("finding-fnd_3"));
    expect(html).toContain("LLM01 · ASI01 · AML.T0051.001");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;>");
    expect(html).not.toMatch(/<img/);
    expect(html).toContain("Coverage: 3 of 4 categories probed");
    const coverageRow = (id: string) =>
      html
        .match(new RegExp(`<tr id="coverage-${id}">(.*?)</tr>`))![1]!
        .replace(/<[^>]+>/g, "|")
        .replace(/\|+/g, "|");
    expect(coverageRow("LLM07")).toBe("|LLM07 System Prompt Leakage|6|2|1|");
    expect(coverageRow("LLM03")).toBe("|LLM03 Supply Chain|0|0|0|not testable from outside: Supply chain: no SBOM|");
  });

  it("shows no coverage table for a run without security probes", () => {
    expect(page()).not.toContain("security-coverage");
  });
});
