import { type DecisionReason, type PolicyApproval, type ReleaseDecision, type Waiver } from "../contract/index.js";
import { excerptParts, FAILURES_SHOWN, type Failure } from "../releases/report/failures.js";
import { Ref, Refs, Status, renderPage } from "./layout.js";

export interface DecisionPageData {
  decision: ReleaseDecision;
  /** The planned runs, in order, with what they test. */
  runs: {
    run_id: string;
    label: string;
    status: string;
    verdict: string;
    pull_request: number | undefined;
    executor: "service" | "local";
    uploaded_by: string | null;
    /** Its spec's file in the repository, when it came from one. */
    spec_path: string | null;
    /** Its checks that did not pass, by case, with the agent's words. */
    failures: Failure[];
  }[];
  waivers: Waiver[];
  approvals: PolicyApproval[];
  hrefOf(ref: string): string | undefined;
  githubWebUrl: string;
}

function ReasonRows({
  reasons,
  hrefOf,
}: {
  reasons: readonly DecisionReason[];
  hrefOf: (ref: string) => string | undefined;
}) {
  return (
    <table>
      <thead>
        <tr>
          <th>Gate</th>
          <th>Status</th>
          <th>Why</th>
          <th>Evidence</th>
        </tr>
      </thead>
      <tbody>
        {reasons.map((reason) => (
          <tr>
            <td>{reason.gate_id ? <code>{reason.gate_id}</code> : <span class="muted">—</span>}</td>
            <td>
              <Status value={reason.status} />
              {reason.blocking && <div class="failed">blocks</div>}
            </td>
            <td>
              {reason.reason}
              {reason.waiver_ref && (
                <div>
                  lifted by <Ref href={hrefOf(reason.waiver_ref)} label={reason.waiver_ref.split("/").at(-1)!} />
                </div>
              )}
            </td>
            <td>
              <Refs refs={reason.evidence_refs} hrefOf={hrefOf} />
              {reason.baseline_evidence_refs.length > 0 && (
                <div>
                  baseline: <Refs refs={reason.baseline_evidence_refs} hrefOf={hrefOf} prefix="base " />
                </div>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A run's checks that did not pass, as `assure test` names them: case, check, spec line, why, what the agent did. */
function FailureRows({
  run,
  hrefOf,
}: {
  run: DecisionPageData["runs"][number];
  hrefOf: (ref: string) => string | undefined;
}) {
  const shown = run.failures.slice(0, FAILURES_SHOWN);
  const more = run.failures.length - shown.length;
  return (
    <>
      <h3 id={`failures-${run.run_id}`}>Not passed: {run.failures.length}</h3>
      <table class="failures">
        <thead>
          <tr>
            <th>Case</th>
            <th>Check</th>
            <th>Spec line</th>
            <th>Status</th>
            <th>Why</th>
            <th>What the agent did</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((failure) => (
            <tr>
              <td>
                <code>{failure.case}</code>
              </td>
              <td>
                <code>{failure.check}</code>
              </td>
              <td>
                {failure.line === undefined ? (
                  <span class="muted">—</span>
                ) : (
                  <code>{run.spec_path ? `${run.spec_path}:${failure.line}` : `line ${failure.line}`}</code>
                )}
              </td>
              <td>
                <Status value={failure.status} />
                {failure.evaluation_ids.length > 1 && <div class="muted">in {failure.evaluation_ids.length}</div>}
              </td>
              <td>
                {failure.reason}{" "}
                <Ref
                  href={hrefOf(`/v1/runs/${run.run_id}/evaluations/${failure.evaluation_ids[0]}`)}
                  label="evidence"
                />
              </td>
              <td>
                {failure.excerpts.map((excerpt) => {
                  const { at, reply, calls } = excerptParts(excerpt);
                  return (
                    <div class="excerpt">
                      <span class="muted">{at}:</span>{" "}
                      {reply === null ? (
                        "no reply"
                      ) : (
                        <>
                          said <q>{reply}</q>
                        </>
                      )}
                      ;{" "}
                      {calls === null ? (
                        "called no tool"
                      ) : (
                        <>
                          called <code>{calls}</code>
                        </>
                      )}
                    </div>
                  );
                })}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {more > 0 && (
        <p>
          and {more} more not passed: <Ref href={hrefOf(`/v1/runs/${run.run_id}/evidence`)} label="the evidence" />
        </p>
      )}
    </>
  );
}

/** A release decision's page: the verdict and, per planned run, each gate with its reason, waiver and evidence. */
export function renderDecisionPage(data: DecisionPageData): string {
  const { decision, hrefOf } = data;
  const subject = "repository" in decision.subject ? decision.subject : undefined;
  const pullRequest = data.runs.find((run) => run.pull_request !== undefined)?.pull_request;
  const policy = decision.reasons.filter((reason) => reason.run_id === null);
  const title = subject
    ? `${decision.status}: ${subject.repository}@${subject.commit_sha.slice(0, 7)}`
    : `${decision.status}: ${decision.decision_id}`;
  return renderPage(title, [
    <h1>
      Release <span class={`verdict ${decision.status}`}>{decision.status}</span>
    </h1>,
    <dl class="facts">
      <dt>Decision</dt>
      <dd>
        <code>{decision.decision_id}</code>, attempt {decision.attempt}
        {decision.decided_at && `, decided ${decision.decided_at}`}
      </dd>
      <dt>Planned by</dt>
      <dd>
        {decision.planned_by === "app"
          ? "the assure GitHub App, from what GitHub says (the base branch's config and policy, the head's specs)"
          : "the client that made it: its plan and base were not read from GitHub by the App"}
      </dd>
      {subject && (
        <>
          <dt>Commit</dt>
          <dd>
            <a href={`${data.githubWebUrl}/${subject.repository}/commit/${subject.commit_sha}`}>
              {subject.repository}@{subject.commit_sha.slice(0, 7)}
            </a>
            {pullRequest !== undefined && (
              <>
                {", "}
                <a href={`${data.githubWebUrl}/${subject.repository}/pull/${pullRequest}`}>
                  pull request #{pullRequest}
                </a>
              </>
            )}
          </dd>
        </>
      )}
      {decision.baseline && (
        <>
          <dt>Baseline</dt>
          <dd>
            {decision.baseline.found ? (
              <>
                <code>{decision.baseline.commit_sha!.slice(0, 7)}</code>, {decision.baseline.age_commits} commit(s) and{" "}
                {decision.baseline.age_days} days before the merge base
                {decision.baseline.warning && <div class="inconclusive">{decision.baseline.warning}</div>}
              </>
            ) : (
              <span class="muted">none: {decision.baseline.reason}</span>
            )}
          </dd>
        </>
      )}
      {decision.changes && (
        <>
          <dt>Change</dt>
          <dd>
            {decision.changes.counts.regressed} regressed, {decision.changes.counts.improved} improved,{" "}
            {decision.changes.counts.inconclusive} inconclusive, {decision.changes.counts.new} new,{" "}
            {decision.changes.counts.removed} removed, {decision.changes.counts.unchanged} unchanged
            {decision.changes.flaky.length > 0 && `; ${decision.changes.flaky.length} flaky`}
          </dd>
        </>
      )}
    </dl>,
    policy.length > 0 && [
      <h2 id="decision-gates">The decision's own gates</h2>,
      <ReasonRows reasons={policy} hrefOf={hrefOf} />,
    ],
    decision.policy_changes.length > 0 && (
      <ul>
        {decision.policy_changes.map((change) => (
          <li>
            {change.kind} <code>{change.where}</code>: {change.message}
          </li>
        ))}
      </ul>
    ),
    ...data.runs.map((run) => [
      <h2 id={`run-${run.run_id}`}>
        {run.label}: <span class={run.verdict}>{run.verdict}</span>
      </h2>,
      <p>
        <Ref href={hrefOf(`/v1/runs/${run.run_id}`)} label={`Run ${run.run_id}`} />{" "}
        <span class="muted">
          ({run.status};{" "}
          {run.executor === "local"
            ? `executed outside the service, uploaded by ${run.uploaded_by}`
            : "executed by the service"}
          )
        </span>
      </p>,
      <ReasonRows reasons={decision.reasons.filter((reason) => reason.run_id === run.run_id)} hrefOf={hrefOf} />,
      run.failures.length > 0 && <FailureRows run={run} hrefOf={hrefOf} />,
    ]),
    (data.waivers.length > 0 || data.approvals.length > 0) && [
      <h2 id="waivers">Waivers and approvals</h2>,
      <ul>
        {data.waivers.map((waiver) => (
          <li id={`waiver-${waiver.waiver_id}`}>
            <code>{waiver.waiver_id}</code>{" "}
            {waiver.revokes ? (
              `revokes ${waiver.revokes}`
            ) : (
              <>
                waives <code>{waiver.gate_id}</code> of {waiver.run_id}
              </>
            )}
            : {waiver.reason}{" "}
            <span class="muted">
              by {waiver.created_by.github_login ? `@${waiver.created_by.github_login}` : waiver.created_by.key_id} at{" "}
              {waiver.created_at}
              {waiver.expires_at && `, until ${waiver.expires_at}`}
              {waiver.active ? "" : " (not in force)"}
            </span>
          </li>
        ))}
        {data.approvals.map((approval) => (
          <li id={`approval-${approval.approval_id}`}>
            <code>{approval.approval_id}</code> approves the policy changes: {approval.reason}{" "}
            <span class="muted">
              by{" "}
              {approval.created_by.github_login ? `@${approval.created_by.github_login}` : approval.created_by.key_id}{" "}
              at {approval.created_at}
            </span>
          </li>
        ))}
      </ul>,
    ],
  ]);
}
