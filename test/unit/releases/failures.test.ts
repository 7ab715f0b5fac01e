import { describe, expect, it } from "@jest/globals";
import { marked } from "marked";
import type { Evaluation, Evidence, ReleaseDecision, TestSpecDocument } from "../../../server/contract/index.js";
import { renderDecisionPage } from "../../../server/pages/decision-page.js";
import {
  excerptOfTurns,
  excerptsWanted,
  FAILURES_SHOWN,
  listFailures,
  type AgentExcerpt,
} from "../../../server/releases/report/failures.js";
import { codeSpan } from "../../../server/releases/report/markdown-text.js";
import type { DecisionReport, RunReport } from "../../../server/releases/report/report.js";
import { renderDecisionSummary } from "../../../server/releases/report/render-markdown.js";

const absolute = (ref: string) => `https://assure.example.test${ref}`;
const document = {
  scenarios: [
    {
      id: "refund",
      turns: [{ user: "refund a-100", expect: [{ tool_called: { name: "lookup_order" } }, { reply_matches: "done" }] }],
      metrics: [{ id: "helpfulness" }],
    },
    { id: "greeting", turns: [{ user: "hi", expect: [{ reply_matches: "hello" }] }] },
  ],
} as unknown as TestSpecDocument;
const lines = {
  "scenarios[0]": 3,
  "scenarios[0].turns[0].expect[0]": 7,
  "scenarios[0].turns[0].expect[1]": 8,
  "scenarios[0].metrics[0]": 10,
  "scenarios[1]": 12,
  "scenarios[1].turns[0].expect[0]": 15,
};

let sequence = 0;
function evaluation(over: Partial<Evaluation>): Evaluation {
  sequence += 1;
  return {
    evaluation_id: `evl_${String(sequence).padStart(4, "0")}`,
    run_id: "run_1",
    kind: "expectation",
    metric_id: "expect.tool_called",
    scope: "turn",
    score: 0,
    threshold: 1,
    status: "failed",
    judge: { provider: "assure", model: "rules" },
    evidence_refs: [],
    reason: "lookup_order was not called",
    scenario_id: "refund",
    conversation_id: `cnv_${sequence}`,
    turn: 1,
    spec_path: "scenarios[0].turns[0].expect[0]",
    created_at: "2026-11-27T00:00:00Z",
    ...over,
  };
}
const excerpt = (reply: string | null, calls: { name: string; arguments_raw: string }[] = []): AgentExcerpt => ({
  conversation_id: "cnv_1",
  scenario_id: "refund",
  repeat_index: 1,
  turn: 1,
  reply,
  tool_calls: calls,
});

describe("the failures of a run", () => {
  it("are one per case and check, in the spec's order, with the worst status, its line, label and excerpts", () => {
    const greeting = evaluation({
      scenario_id: "greeting",
      metric_id: "expect.reply_matches",
      spec_path: "scenarios[1].turns[0].expect[0]",
      reason: "reply did not match /hello/",
    });
    const first = evaluation({ status: "inconclusive", reason: "not sure" });
    const second = evaluation({ status: "failed" });
    const metric = evaluation({
      kind: "metric",
      metric_id: "helpfulness",
      spec_path: null,
      status: "inconclusive",
      reason: "judge unsure",
    });
    const passed = evaluation({ status: "passed", scenario_id: "greeting" });
    const runWide = evaluation({
      kind: "budget",
      metric_id: "budget.tokens",
      scenario_id: null,
      conversation_id: null,
      turn: null,
      spec_path: null,
      status: "errored",
      reason: "over budget",
    });
    const source = { evaluations: [greeting, first, second, metric, passed, runWide], document, lines };
    const failures = listFailures(
      source,
      new Map([[first.evaluation_id, excerpt("I could not find it", [{ name: "search", arguments_raw: '{"q":1}' }])]]),
    );
    expect(failures.map((f) => [f.case, f.check, f.line, f.status, f.reason])).toEqual([
      ["refund", 'tool_called {"name":"lookup_order"}', 7, "failed", "lookup_order was not called"],
      ["refund", "metric helpfulness", 10, "inconclusive", "judge unsure"],
      ["greeting", "reply_matches hello", 15, "failed", "reply did not match /hello/"],
      ["(run)", "budget.tokens", undefined, "errored", "over budget"],
    ]);
    expect(failures[0]!.evaluation_ids).toEqual([first.evaluation_id, second.evaluation_id]);
    expect(failures[0]!.excerpts).toEqual([
      excerpt("I could not find it", [{ name: "search", arguments_raw: '{"q":1}' }]),
    ]);
    // Excerpts are read for the shown failures' conversations only, the first few of each.
    expect(excerptsWanted(source).map((e) => e.evaluation_id)).toEqual([
      first.evaluation_id,
      second.evaluation_id,
      metric.evaluation_id,
      greeting.evaluation_id,
    ]);
    expect(excerptsWanted(source, { shown: 1, each: 1 }).map((e) => e.evaluation_id)).toEqual([first.evaluation_id]);
  });

  it("name a check by its kind when the spec is not known", () => {
    const [failure] = listFailures({ evaluations: [evaluation({})], document: undefined, lines: {} }, new Map());
    expect(failure).toMatchObject({ check: "expect.tool_called", line: undefined });
  });

  it("read an excerpt from the API's turns: the judged turn, or the whole conversation's calls and last reply", () => {
    const turn = (n: number, reply: string, call: string) => ({
      turn: n,
      reply,
      steps: [{ tool_calls: [{ name: call, arguments_raw: "{}" }] }] as unknown as Parameters<
        typeof excerptOfTurns
      >[2][number]["steps"],
    });
    const conversation = { conversation_id: "cnv_1", scenario_id: "refund", repeat_index: 2 };
    expect(excerptOfTurns(conversation, 1, [turn(1, "first", "a")])).toEqual({
      ...conversation,
      turn: 1,
      reply: "first",
      tool_calls: [{ name: "a", arguments_raw: "{}" }],
    });
    expect(excerptOfTurns(conversation, null, [turn(1, "first", "a"), turn(2, "last", "b")])).toMatchObject({
      turn: 2,
      reply: "last",
      tool_calls: [
        { name: "a", arguments_raw: "{}" },
        { name: "b", arguments_raw: "{}" },
      ],
    });
  });
});

describe("agent text in Markdown", () => {
  it("is a code span that no backtick run closes, on one line", () => {
    expect(codeSpan("plain")).toBe("`plain`");
    expect(codeSpan("a ` b")).toBe("``a ` b``");
    expect(codeSpan("```x``")).toBe("```` ```x`` ````");
    expect(codeSpan("line\n\n- item\n# title")).toBe("`line - item # title`");
    expect(codeSpan("  ")).toBe("` `");
  });
});

const HOSTILE =
  "Sure! ` <img src=x onerror=alert(1)> [click](https://evil.example) @admin\n\n| a | b |\n</details> ``` ![i](https://evil.example/x.png)";

function report(failures: number, reply = HOSTILE): DecisionReport {
  const evaluations = Array.from({ length: failures }, (_, i) =>
    evaluation({ scenario_id: `case-${String(i).padStart(2, "0")}`, reason: `reason ${i}: ${HOSTILE}` }),
  );
  const source = { evaluations, document, lines };
  const excerpts = new Map(
    excerptsWanted(source).map((e) => [
      e.evaluation_id,
      excerpt(reply, [{ name: "lookup_order", arguments_raw: '{"order_id":"`a-100`"}' }]),
    ]),
  );
  const run = {
    evidence: {
      run_id: "run_1",
      verdict: "FAIL",
      spec_version: "git:abc",
      agent_version: "1",
      environment: "staging",
      failure: null,
      gates: [],
      links: { self: "/v1/runs/run_1/evidence" },
    } as unknown as Evidence,
    specName: "refund",
    specPath: ".assure/specs/refund.yaml",
    lines,
    environmentName: "staging",
    unmet: evaluations,
    failures: listFailures(source, excerpts),
    findings: [],
  } satisfies RunReport;
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
  return { decision, runs: [run], approval: null };
}

describe("the failures in a decision's Markdown", () => {
  it("name each failure with its case, check, spec line, reason and what the agent said and called", () => {
    const summary = renderDecisionSummary(report(2, "I could not find order a-100."), absolute, { limit: 65_535 });
    expect(summary).toContain("**Not passed** (2 checks):");
    expect(summary).toContain(
      '- ❌ `case-00` `tool_called {"name":"lookup_order"}` at `.assure/specs/refund.yaml:7`: failed, ',
    );
    expect(summary).toContain(`(${"[evidence](https://assure.example.test/v1/runs/run_1/evaluations/"}`);
    expect(summary).toContain(
      '  - repeat 1, turn 1: said `I could not find order a-100.`; called ``lookup_order({"order_id":"`a-100`"})``',
    );
  });

  it("show the first 20 per run, then how many more and where the evidence is", () => {
    const summary = renderDecisionSummary(report(FAILURES_SHOWN + 5), absolute, { limit: 1_000_000 });
    expect(summary.match(/^- ❌ /gm)).toHaveLength(FAILURES_SHOWN);
    expect(summary).toContain(
      "- and 5 more checks not passed: [the evidence](https://assure.example.test/v1/runs/run_1/evidence)",
    );
  });

  it("keep the agent's text inside code spans: no HTML, link, image, mention or table of its own", () => {
    const summary = renderDecisionSummary(report(3), absolute, { limit: 65_535 });
    // Read as GitHub Flavored Markdown (autolinks and tables too): the agent's text stays text.
    const html = marked.parse(summary, { gfm: true, async: false });
    expect(html).not.toMatch(/<img|<\/details>|href="https:\/\/evil|<h1/);
    expect(html.match(/<table>/g)).toHaveLength(1); // the run's gates
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    // Every line that names a failure or an excerpt is a list item: nothing broke out onto a line of its own.
    const failureLines = summary.split("\n").filter((line) => line.includes("onerror"));
    expect(failureLines.length).toBeGreaterThan(0);
    for (const line of failureLines) expect(line).toMatch(/^ {0,2}- /);
  });

  it("fit GitHub's check run limit however long and many the failures are", () => {
    const many = report(FAILURES_SHOWN, "x".repeat(50_000));
    const runs = Array.from({ length: 40 }, () => many.runs[0]!);
    const summary = renderDecisionSummary({ ...many, runs }, absolute, { limit: 65_535 });
    expect(summary.length).toBeLessThanOrEqual(65_535);
    expect(summary).toMatch(/lines? cut to fit; the whole decision: /);
  });
});

describe("the failures on a decision's page", () => {
  it("are a table per run: case, check, spec line, status, why with its evidence, and the agent's words, escaped", () => {
    const { decision, runs } = report(FAILURES_SHOWN + 2);
    const html = renderDecisionPage({
      decision,
      runs: [
        {
          run_id: "run_1",
          label: "refund in staging",
          status: "FAILED",
          verdict: "FAIL",
          pull_request: undefined,
          executor: "service",
          uploaded_by: null,
          spec_path: ".assure/specs/refund.yaml",
          failures: runs[0]!.failures,
        },
      ],
      waivers: [],
      approvals: [],
      hrefOf: (ref) => `/pages/x#${ref}`,
      githubWebUrl: "https://github.com",
    });
    expect(html).toContain("Not passed: 22");
    expect(html).toContain("<code>case-00</code>");
    expect(html).toContain("<code>.assure/specs/refund.yaml:7</code>");
    expect(html).toContain("and 2 more not passed");
    expect(html).toContain('href="/pages/x#/v1/runs/run_1/evidence"');
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=alert(1)>");
    expect(html.match(/<tr>/g)!.length).toBeGreaterThanOrEqual(FAILURES_SHOWN);
  });
});
