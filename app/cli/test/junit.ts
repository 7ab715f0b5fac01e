import { hostname } from "node:os";
import type { XMLBuilder } from "xmlbuilder2/lib/interfaces.js";
import type { ReleaseDecision } from "../../../server/contract/index.js";
import { renderDecisionTitle } from "../../../server/releases/report/render-markdown.js";
import type { RunResult } from "./run-results.js";

const seconds = (from: string | null, to: string | null) =>
  from && to ? ((Date.parse(to) - Date.parse(from)) / 1000).toFixed(3) : "0";
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** The testcase of each case × check, and of each gate; what did not pass holds the evidence. */
function addRun(suites: XMLBuilder, result: RunResult): { tests: number; failures: number; errors: number } {
  const { run, evidence, spec } = result;
  const unmetOf = new Map(
    result.unmet.map((unmet) => [JSON.stringify([unmet.case, unmet.kind, unmet.metric_id, unmet.spec_path]), unmet]),
  );
  const cases = result.checks.map((check) => ({
    check,
    unmet: unmetOf.get(JSON.stringify([check.case, check.kind, check.metric_id, check.spec_path])),
  }));
  const gates = evidence.gates;
  const failures =
    cases.filter((c) => c.unmet?.status === "failed").length + gates.filter((gate) => gate.status === "failed").length;
  const errors =
    cases.filter((c) => c.unmet && c.unmet.status !== "failed").length +
    gates.filter((gate) => gate.status === "inconclusive").length +
    (run.failure ? 1 : 0);
  const tests = cases.length + gates.length + (run.failure ? 1 : 0);

  const suite = suites.ele("testsuite", {
    name: spec.name,
    tests,
    failures,
    errors,
    skipped: 0,
    time: seconds(run.started_at, run.ended_at),
    timestamp: (run.started_at ?? run.created_at).replace(/\.\d+Z$/, ""),
    hostname: hostname(),
    id: run.run_id,
    package: spec.path,
  });
  const properties = suite.ele("properties");
  for (const [name, value] of Object.entries({
    run_id: run.run_id,
    spec_file: spec.path,
    spec_version: spec.spec_version,
    status: run.status,
    verdict: run.verdict,
  })) {
    properties.ele("property", { name, value });
  }

  if (run.failure) {
    suite
      .ele("testcase", { classname: spec.name, name: "run" })
      .ele("error", { type: run.failure.cause, message: oneLine(run.failure.message) })
      .txt(run.failure.message);
  }
  for (const { check, unmet } of cases) {
    const testcase = suite.ele("testcase", {
      classname: `${spec.name}.${check.case}`,
      name: check.line === undefined ? check.check : `${check.check} (line ${check.line})`,
      assertions: check.total,
    });
    if (!unmet) continue;
    const where = unmet.line === undefined ? spec.path : `${spec.path}:${unmet.line}`;
    const summary = `${unmet.status} in ${unmet.total - unmet.passed} of ${unmet.total}: ${oneLine(unmet.reason)}`;
    const evidenceLines = unmet.excerpts.map((excerpt) => {
      const at = `repeat ${excerpt.repeat_index}${excerpt.turn === null ? "" : `, turn ${excerpt.turn}`}`;
      const calls = excerpt.tool_calls.map((call) => `${call.name}(${call.arguments_raw})`).join(", ") || "no tool";
      return `${at}: said ${excerpt.reply === null ? "nothing" : JSON.stringify(excerpt.reply)}; called ${calls}`;
    });
    testcase
      .ele(unmet.status === "failed" ? "failure" : "error", { type: unmet.status, message: summary })
      .txt([`${where}: ${unmet.reason}`, ...evidenceLines].join("\n"));
  }
  for (const gate of gates) {
    const testcase = suite.ele("testcase", {
      classname: `${spec.name}.gates`,
      name: `gate ${gate.id}${gate.title ? `: ${gate.title}` : ""}`,
    });
    if (gate.status === "passed" || gate.status === "waived") continue;
    testcase
      .ele(gate.status === "failed" ? "failure" : "error", { type: gate.status, message: oneLine(gate.reason) })
      .txt(gate.reason);
  }
  return { tests, failures, errors };
}

/**
 * JUnit XML of `assure test` as CI test reporters read it (the Jenkins JUnit schema): a test suite
 * per run, a test case per case × check (failed: `<failure>`; inconclusive or errored: `<error>`,
 * with the spec line and what the agent said and called), and one per gate.
 */
export async function renderJunit(decision: ReleaseDecision, runs: readonly RunResult[]): Promise<string> {
  // Loaded when asked for: the XML builder is the largest library of the command.
  const { create } = await import("xmlbuilder2");
  // Characters XML cannot hold (control characters an agent may send) are dropped.
  const root = create({ version: "1.0", encoding: "UTF-8", invalidCharReplacement: "" });
  const suites = root.ele("testsuites", { name: `assure test: ${renderDecisionTitle({ decision })}` });
  const totals = runs.map((run) => addRun(suites, run));
  suites.att("tests", String(totals.reduce((n, t) => n + t.tests, 0)));
  suites.att("failures", String(totals.reduce((n, t) => n + t.failures, 0)));
  suites.att("errors", String(totals.reduce((n, t) => n + t.errors, 0)));
  return root.end({ prettyPrint: true });
}
