import * as core from "@actions/core";
import { isTerminalRunStatus } from "../../server/contract/index.js";
import { renderDecisionTitle } from "../../server/releases/report/render-markdown.js";
import { AssureApiError, makeAssureClient } from "./assure-client.js";
import { openCommitFiles } from "./commit-files.js";
import { FileProblemsError, startGate } from "./gate.js";
import { readInputs } from "./inputs.js";
import { publishReport, readReport } from "./report.js";
import { signIn } from "./sign-in.js";
import { waitForDecision } from "./wait.js";
import { gatedCommit } from "./workflow-context.js";

async function gate(): Promise<void> {
  const inputs = readInputs();
  const deadline = Date.now() + inputs.timeoutMs;
  const commit = gatedCommit();
  const signedIn = await signIn(inputs.apiUrl, commit, inputs.token, deadline);
  if (signedIn.kind === "fork") {
    core.notice(
      `This pull request comes from a fork, which gets no GitHub OIDC token: the assure GitHub App gates it (its check run says what it needs). Nothing to do here.`,
      { title: "assure: gated by the App" },
    );
    return;
  }
  const client = makeAssureClient(inputs.apiUrl, { token: signedIn.token, deadline, log: core.info });
  const files = openCommitFiles(process.env.GITHUB_WORKSPACE ?? process.cwd(), commit.sha);

  const started = await core.group(`Start the runs of ${commit.repository.full_name}@${commit.sha.slice(0, 7)}`, () =>
    startGate(client, inputs, commit, files, core.info, core.warning),
  );
  if (inputs.execute === "in-job") {
    // The engine is loaded only here: a step that lets the service execute its runs never starts it.
    const { executeInJob, inJobSlotsOf } = await import("./in-job.js");
    const slots = inJobSlotsOf(started);
    const held = await core.group(`Hold ${slots.length} run(s) in this job against ${inputs.agentUrl}`, () =>
      executeInJob(client, slots, {
        agentUrl: inputs.agentUrl!,
        agentHeaders: inputs.agentHeaders,
        source: { repository: commit.repository.full_name, commit_sha: commit.sha },
        deadline,
        log: core.info,
      }),
    );
    started.runs.push(...held);
  }
  // The API's URL, and the page a person can open (a signed, expiring link; the API's without one).
  const decisionApiUrl = `${inputs.apiUrl}${started.decision.links.self}`;
  const pageOf = (decision: typeof started.decision) =>
    decision.links.html ? `${inputs.apiUrl}${decision.links.html}` : decisionApiUrl;
  const decisionUrl = pageOf(started.decision);
  core.setOutput("run-ids", JSON.stringify(started.runs.map(({ run }) => run.run_id)));
  core.setOutput("decision-api-url", decisionApiUrl);
  core.setOutput("decision-url", decisionUrl);
  const uploads = started.skipped.filter((pair) => pair.executor === "local").length;
  const deployments = started.skipped.length - uploads;
  const notes = [
    ...(deployments > 0
      ? [
          `${deployments} run(s) wait for a deployment (on_deployment) and were not started here: pass agent-url, or let the App start them when the deployment succeeds.`,
        ]
      : []),
    ...(uploads > 0
      ? [
          `${uploads} run(s) are executed outside the service (executor: local): the decision waits for them to be uploaded (assure test --upload).`,
        ]
      : []),
  ];
  notes.forEach((note) => core.notice(note));
  if (!inputs.wait) {
    core.setOutput("decision", started.decision.status);
    core.setOutput(
      "verdicts",
      JSON.stringify(Object.fromEntries(started.runs.map(({ run }) => [run.run_id, run.verdict]))),
    );
    core.info(`Not waiting (wait: false): the decision is at ${decisionUrl}`);
    return;
  }

  const labels = new Map(
    started.runs.map(({ run, spec, environmentName }) => [
      run.run_id,
      `${run.run_id} ${spec.path} in ${environmentName}`,
    ]),
  );
  const { decision, timedOut } = await core.group("Wait for the release decision", () =>
    waitForDecision(client, started.decision, { deadline, label: (id) => labels.get(id) ?? id, log: core.info }),
  );
  core.setOutput("decision", decision.status);
  core.setOutput("decision-url", pageOf(decision));
  core.setOutput(
    "verdicts",
    JSON.stringify(Object.fromEntries(decision.runs.filter((r) => r.planned).map((r) => [r.run_id, r.verdict]))),
  );
  await publishReport(await readReport(client, decision, started.specs), inputs.apiUrl, notes);

  if (timedOut) {
    const going = decision.runs
      .filter((r) => r.planned && !isTerminalRunStatus(r.status))
      .map((r) => `${labels.get(r.run_id) ?? r.run_id} (${r.status})`);
    const waiting = decision.reasons.filter((r) => r.status === "pending" && r.run_id === null).map((r) => r.reason);
    core.setFailed(
      `Timed out after ${inputs.timeoutMs / 1000} s with the release still pending: ${[...going, ...waiting].join("; ") || "no run started yet"}. The decision: ${decisionUrl}`,
    );
    return;
  }
  const title = renderDecisionTitle({ decision });
  if (decision.status === "BLOCKED" && inputs.failOn === "blocked") {
    core.setFailed(`${title}. The evidence: ${decisionUrl}`);
  } else core.info(`${title}. The evidence: ${decisionUrl}`);
}

/**
 * Gates this workflow's commit on assure: what the Action does. It never throws: a failure is the
 * step's (core.setFailed), as the toolkit expects of an action's `run()`.
 */
export async function run(): Promise<void> {
  await gate().catch((error: unknown) => {
    if (error instanceof FileProblemsError) {
      for (const problem of error.problems.slice(0, 10)) {
        core.error(problem.message, { file: problem.file, startLine: problem.line, title: "assure" });
      }
    }
    if (error instanceof AssureApiError && error.status === 401) {
      core.setFailed(`assure refused the sign-in: ${error.message}`);
      return;
    }
    core.setFailed(error instanceof Error ? error.message : String(error));
  });
}
