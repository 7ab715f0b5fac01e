import type { Evaluation, Evidence, Finding, Run, TestSpecDocument } from "../contract/index.js";
import { decideRate, wilsonInterval } from "../specs/pass-rate.js";
import type { CaseTally, LoggedEvent } from "../store/index.js";
import { ConversationBlock, EvaluationTable, type HeldConversationView } from "./conversation-view.js";
import { Refs, Status, percent, renderPage } from "./layout.js";
import { findingsByCategory } from "../runs/findings-by-category.js";

export interface RunPageData {
  run: Run;
  evidence: Evidence;
  spec: {
    name: string;
    document: TestSpecDocument | undefined;
    file: { text: string; repository: string | null; commit_sha: string | null; path: string | null } | undefined;
  };
  environmentName: string;
  agent: { name: string; version: string };
  /** The failing cases first, at most a hundred; `caseCounts` counts them all. */
  tallies: CaseTally[];
  caseCounts: { cases: number; failing: number };
  runWide: Evaluation[];
  findings: Finding[];
  runEvents: LoggedEvent[];
  conversations: HeldConversationView[];
  paging: { page: number; pages: number; total: number; hrefOfPage(page: number): string };
  /** Where an evidence ref is shown, as a link (undefined: no page shows it to this reader). */
  hrefOf(ref: string): string | undefined;
  githubWebUrl: string;
}

const SEVERITY_ORDER = ["critical", "high", "medium", "low", "info"];
/** Characters of the spec file shown on the page. */
const SPEC_SHOWN = 100_000;

/** The bar a metric's pass rate is held to by a gate of the spec, at its confidence; none for other checks. */
type BarOf = (tally: CaseTally) => { bar: number; confidence: number } | undefined;

const barsOf =
  (spec: TestSpecDocument | undefined): BarOf =>
  (tally) => {
    const gate = spec?.gates.find((g) => g.require.metric === tally.metric_id && g.require.confidence !== undefined);
    return gate ? { bar: gate.require.min_pass_rate ?? 1, confidence: gate.require.confidence! } : undefined;
  };

/**
 * Each case's checks over its repeats: passes and the Wilson interval of the pass rate (95%, or the
 * confidence of the gate that holds the metric to a bar, with how many more repeats would settle
 * it when the interval straddles the bar).
 */
function CaseTallies({
  tallies,
  counts,
  barOf,
}: {
  tallies: readonly CaseTally[];
  counts: { cases: number; failing: number };
  barOf: BarOf;
}) {
  if (tallies.length === 0) return <p class="muted">No check of a conversation was evaluated.</p>;
  const notShown = counts.cases - tallies.length;
  return (
    <>
      <p>
        {counts.cases} case(s) checked, {counts.failing} with a check that did not pass
        {notShown > 0
          ? `; the first ${tallies.length} are listed, those that did not pass first (${notShown} more)`
          : ""}
        .
      </p>
      <table>
        <thead>
          <tr>
            <th>Case</th>
            <th>Check</th>
            <th>Passed</th>
            <th>Wilson interval</th>
            <th>Failed / inconclusive / errored</th>
          </tr>
        </thead>
        <tbody>
          {tallies.map((t) => {
            const judged = t.passed + t.failed;
            const held = barOf(t);
            const interval = judged > 0 ? wilsonInterval(t.passed, judged, held?.confidence ?? 0.95) : undefined;
            const decided = held && judged > 0 ? decideRate(t.passed, judged, held.bar, held.confidence) : undefined;
            const settle =
              decided?.status === "inconclusive"
                ? decided.samplesToSettle === null
                  ? "; more repeats at this rate would not settle it"
                  : `; straddles the bar of ${percent(held!.bar)}: ${decided.samplesToSettle - judged} more repeat(s) would settle it`
                : "";
            return (
              <tr>
                <td>
                  <code>{t.scenario_id ?? "run"}</code>
                </td>
                <td>
                  <code>{t.metric_id}</code>
                  {t.spec_path && <div class="muted">{t.spec_path}</div>}
                </td>
                <td class={t.failed > 0 ? "failed" : t.inconclusive + t.errored > 0 ? "inconclusive" : "passed"}>
                  {t.passed}/{judged}
                </td>
                <td>
                  {interval
                    ? `${percent(held?.confidence ?? 0.95)}: [${percent(interval.lower)}, ${percent(interval.upper)}]${settle}`
                    : "—"}
                </td>
                <td>
                  {t.failed} / {t.inconclusive} / {t.errored}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function FindingTable({ findings, hrefOf }: { findings: Finding[]; hrefOf: RunPageData["hrefOf"] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Severity</th>
          <th>Finding</th>
          <th>Named in</th>
          <th>Evidence</th>
        </tr>
      </thead>
      <tbody>
        {findings.map((finding) => (
          <tr id={`finding-${finding.finding_id}`}>
            <td class={finding.severity === "critical" || finding.severity === "high" ? "failed" : "inconclusive"}>
              {finding.severity}
            </td>
            <td>
              <strong>{finding.title}</strong>
              <div>{finding.description}</div>
              {finding.attack && (
                <div class="muted">
                  Attack ({finding.attack.family}
                  {finding.attack.strategies.length > 0 && `, ${finding.attack.strategies.join(" then ")}`}):{" "}
                  <code>{finding.attack.sent}</code>
                </div>
              )}
              <div class="muted">
                <code>{finding.probe_id}</code>
                {finding.spec_path && ` at ${finding.spec_path}`}
              </div>
            </td>
            <td>
              {[finding.owasp_llm ?? finding.category, finding.owasp_asi, finding.atlas].filter(Boolean).join(" · ")}
              {finding.detection && <div class="muted">{finding.detection}</div>}
            </td>
            <td>
              <Refs refs={finding.evidence_refs} hrefOf={hrefOf} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Which OWASP categories the run's probes covered, and why the others were not. */
function CoverageTable({ rows }: { rows: NonNullable<Evidence["security_coverage"]> }) {
  return [
    <h3 id="security-coverage">
      Coverage: {rows.filter((row) => row.probed).length} of {rows.length} categories probed
    </h3>,
    <table>
      <thead>
        <tr>
          <th>Category</th>
          <th>Probes</th>
          <th>Tripped</th>
          <th>Inconclusive</th>
          <th>Not probed because</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr id={`coverage-${row.id}`}>
            <td>
              {row.id} {row.name}
            </td>
            <td>{row.probes}</td>
            <td class={row.tripped > 0 ? "failed" : undefined}>{row.tripped}</td>
            <td class={row.inconclusive > 0 ? "inconclusive" : undefined}>{row.inconclusive}</td>
            <td class="muted">{row.not_probed ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>,
  ];
}

/** A run's page: what was tested where, the verdict and its gates, the checks, the findings, and every conversation. */
export function renderRunPage(data: RunPageData): string {
  const { run, evidence, spec, hrefOf, paging } = data;
  const file = spec.file;
  const fileUrl =
    file?.repository && file.commit_sha && file.path
      ? `${data.githubWebUrl}/${file.repository}/blob/${file.commit_sha}/${file.path}`
      : undefined;
  const source = run.source;
  const findings = [...data.findings].sort(
    (a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity),
  );
  const navigation = paging.pages > 1 && (
    <nav class="pages" aria-label="Conversation pages">
      {paging.page > 1 && (
        <a href={paging.hrefOfPage(paging.page - 1)}>
          ← conversations {(paging.page - 2) * 100 + 1}–{(paging.page - 1) * 100}
        </a>
      )}
      <span>
        Page {paging.page} of {paging.pages} ({paging.total} conversations)
      </span>
      {paging.page < paging.pages && (
        <a href={paging.hrefOfPage(paging.page + 1)}>
          conversations {paging.page * 100 + 1}–{Math.min((paging.page + 1) * 100, paging.total)} →
        </a>
      )}
    </nav>
  );
  return renderPage(`${evidence.verdict}: ${spec.name} in ${data.environmentName} (${run.run_id})`, [
    <h1>
      Run <code>{run.run_id}</code> <span class={`verdict ${evidence.verdict}`}>{evidence.verdict}</span>
    </h1>,
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Status value={run.status} />
        {run.failure && (
          <>
            {" "}
            — <code>{run.failure.cause}</code>: {run.failure.message}
          </>
        )}
      </dd>
      <dt>What was tested</dt>
      <dd>
        Spec <strong>{spec.name}</strong> <code>{run.spec_version}</code>
        {file?.path && <> from {fileUrl ? <a href={fileUrl}>{file.path}</a> : <code>{file.path}</code>}</>}
      </dd>
      <dt>Where it ran</dt>
      <dd>
        Environment <strong>{data.environmentName}</strong>, agent <strong>{data.agent.name}</strong> version{" "}
        <code>{run.agent_version}</code>
        {run.agent_url && (
          <>
            {" "}
            at <code>{run.agent_url}</code>
          </>
        )}
      </dd>
      <dt>Executed by</dt>
      <dd>
        {run.executor === "local" ? (
          <>
            outside the service (<code>executor: local</code>), uploaded by <code>{run.uploaded_by}</code>; its
            conversations were judged by the service
          </>
        ) : (
          <>
            the service (<code>executor: service</code>)
          </>
        )}
      </dd>
      {source && (
        <>
          <dt>Commit</dt>
          <dd>
            <a href={`${data.githubWebUrl}/${source.repository}/commit/${source.commit_sha}`}>
              {source.repository}@{source.commit_sha.slice(0, 7)}
            </a>
            {source.pull_request !== undefined && (
              <>
                {", "}
                <a href={`${data.githubWebUrl}/${source.repository}/pull/${source.pull_request}`}>
                  pull request #{source.pull_request}
                </a>
              </>
            )}
          </dd>
        </>
      )}
      <dt>When</dt>
      <dd>
        created {run.created_at}
        {run.ended_at && `, ended ${run.ended_at}`}
      </dd>
      {evidence.usage && (
        <>
          <dt>Agent usage</dt>
          <dd>
            {evidence.usage.answers} answers, {evidence.usage.total_tokens} tokens
            {evidence.usage.answers_without_usage > 0 &&
              ` (${evidence.usage.answers_without_usage} reported none: a lower bound)`}
            {evidence.usage_detail && (
              <>
                , cost{" "}
                {evidence.usage_detail.cost_usd !== null
                  ? `$${evidence.usage_detail.cost_usd}`
                  : `unknown (${evidence.usage_detail.cost_unknown})`}
                {evidence.usage_detail.latency_ms_p95 !== null &&
                  `, p95 latency ${evidence.usage_detail.latency_ms_p95} ms`}
              </>
            )}
          </dd>
        </>
      )}
    </dl>,
    <h2 id="gates">Gates</h2>,
    evidence.gates.length === 0 ? (
      <p class="muted">No gate decided yet.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>Gate</th>
            <th>Status</th>
            <th>Reason</th>
            <th>Evidence</th>
          </tr>
        </thead>
        <tbody>
          {evidence.gates.map((gate) => (
            <tr id={`gate-${gate.gate_id}`}>
              <td>
                <code>{gate.gate_id}</code>
                {gate.title && <div class="muted">{gate.title}</div>}
              </td>
              <td>
                <Status value={gate.status} />
              </td>
              <td>{gate.reason}</td>
              <td>
                <Refs refs={gate.evidence_refs} hrefOf={hrefOf} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    ),
    <h2 id="checks">Checks by case</h2>,
    <CaseTallies tallies={data.tallies} counts={data.caseCounts} barOf={barsOf(spec.document)} />,
    data.runWide.length > 0 && [
      <h3>Checks of the whole run</h3>,
      <EvaluationTable evaluations={data.runWide} hrefOf={hrefOf} />,
    ],
    <h2 id="findings">Security findings</h2>,
    findings.length === 0 ? (
      <p class="muted">None.</p>
    ) : (
      findingsByCategory(findings).map((group) => [
        <h3>
          {group.title}
          {group.asi.length > 0 && <span class="muted"> · {group.asi.join(", ")}</span>} ({group.findings.length})
        </h3>,
        <FindingTable findings={group.findings} hrefOf={hrefOf} />,
      ])
    ),
    evidence.security_coverage && <CoverageTable rows={evidence.security_coverage} />,
    <h2 id="timeline">The run's own trace</h2>,
    <p class="muted">
      Its moves and the findings raised (the evaluations are listed with their conversations, and above).
    </p>,
    <ul>
      {data.runEvents.map((event) => (
        <li id={`trace-${event.sequence}`}>
          <code>{event.occurred_at}</code> {event.type}
          {event.type === "run.status_changed" && (
            <>
              : {event.data.from} → <Status value={event.data.to} />
            </>
          )}
          {event.type === "finding.raised" && (
            <>
              : {event.data.severity} <code>{event.data.probe_id}</code>
            </>
          )}
        </li>
      ))}
    </ul>,
    <h2 id="conversations">Conversations</h2>,
    navigation,
    data.conversations.length === 0 ? (
      <p class="muted">No conversation was held.</p>
    ) : (
      data.conversations.map((held) => <ConversationBlock held={held} hrefOf={hrefOf} />)
    ),
    navigation,
    file && (
      <details>
        <summary>The spec file{file.path ? ` ${file.path}` : ""}</summary>
        <pre>{file.text.length > SPEC_SHOWN ? `${file.text.slice(0, SPEC_SHOWN)}\n…` : file.text}</pre>
        {file.text.length > SPEC_SHOWN && (
          <p class="muted">
            The first {SPEC_SHOWN / 1000} kB of {Math.round(file.text.length / 1000)} kB: the whole version is at
            /v1/test-specs/{run.test_spec_id}?spec_version={run.spec_version}.
          </p>
        )}
      </details>
    ),
  ]);
}
