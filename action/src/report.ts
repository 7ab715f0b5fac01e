import * as core from "@actions/core";
import {
  evidenceLinker,
  type Evaluation,
  type Evidence,
  type PageKind,
  type ReleaseDecision,
  type Run,
  type Turn,
} from "../../server/contract/index.js";
import {
  excerptOfTurns,
  excerptsWanted,
  listFailures,
  type AgentExcerpt,
} from "../../server/releases/report/failures.js";
import { UNMET_STATUSES, type DecisionReport, type RunReport } from "../../server/releases/report/report.js";
import { renderDecisionSummary } from "../../server/releases/report/render-markdown.js";
import { specAnnotations } from "../../server/releases/report/spec-annotations.js";
import { AssureApiError, type AssureClient } from "./assure-client.js";
import type { UploadedSpec } from "./gate.js";

/** A step's job summary may hold 1 MiB. */
const SUMMARY_LIMIT = 1_000_000;
/** GitHub shows 10 error and 10 warning annotations per step. */
const SHOWN_PER_LEVEL = 10;

/** A decision's report, and the signed links to the pages of it and of its runs (`links.html`), by kind and id. */
export interface ReadReport {
  report: DecisionReport;
  pageLinks: Map<string, string>;
}

/** Turns of a conversation an excerpt of the whole of it reads at most (its last turn's reply, the tools called). */
const TURNS_READ = 20;

/** What the agent said and called where an evaluation looked, read through the API; undefined when its conversation is gone. */
async function readExcerpt(
  client: AssureClient,
  runId: string,
  evaluation: Evaluation,
): Promise<AgentExcerpt | undefined> {
  const base = `/v1/runs/${runId}/conversations/${evaluation.conversation_id}`;
  try {
    const { body: conversation } = await client.get<{
      conversation_id: string;
      scenario_id: string;
      repeat_index: number;
      turns: { turn: number }[];
    }>(base);
    const numbers =
      evaluation.turn === null
        ? conversation.turns
            .map((t) => t.turn)
            .filter((turn) => turn > 0)
            .slice(-TURNS_READ)
        : [evaluation.turn];
    const turns: Turn[] = [];
    for (const turn of numbers) turns.push((await client.get<Turn>(`${base}/turns/${turn}`)).body);
    return excerptOfTurns(conversation, evaluation.turn, turns);
  } catch (error) {
    if (error instanceof AssureApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** The decision's report, read through the API: each planned run's evidence and unmet evaluations, with its spec's lines. */
export async function readReport(
  client: AssureClient,
  decision: ReleaseDecision,
  specs: ReadonlyMap<string, UploadedSpec>,
): Promise<ReadReport> {
  const bySpecId = new Map([...specs.values()].map((spec) => [spec.test_spec_id, spec]));
  const runs: RunReport[] = [];
  const pageLinks = new Map<string, string>();
  if (decision.links.html) pageLinks.set(`decision ${decision.decision_id}`, decision.links.html);
  for (const { run_id, test_spec_id } of decision.planned) {
    if (!run_id) continue;
    const { body: run } = await client.get<Run>(`/v1/runs/${run_id}`);
    if (run.links.html) pageLinks.set(`run ${run_id}`, run.links.html);
    const { body: evidence } = await client.get<Evidence>(`/v1/runs/${run_id}/evidence`);
    const unmet: Evaluation[] = [];
    let cursor: string | null = null;
    do {
      const query: string = new URLSearchParams({ limit: "200", ...(cursor ? { cursor } : {}) }).toString();
      const { body } = await client.get<{ data: Evaluation[]; next_cursor: string | null }>(
        `/v1/runs/${run_id}/evaluations?${query}`,
      );
      unmet.push(...body.data.filter((evaluation) => UNMET_STATUSES.has(evaluation.status)));
      cursor = body.next_cursor;
    } while (cursor);
    const spec = bySpecId.get(test_spec_id);
    const source = { evaluations: unmet, document: spec?.document, lines: spec?.lines ?? {} };
    // The Markdown shows one excerpt per failure: only those are read.
    const excerpts = new Map<string, AgentExcerpt>();
    for (const evaluation of excerptsWanted(source, { each: 1 })) {
      const excerpt = await readExcerpt(client, run_id, evaluation);
      if (excerpt) excerpts.set(evaluation.evaluation_id, excerpt);
    }
    runs.push({
      evidence,
      specName: spec?.name ?? test_spec_id,
      specPath: spec?.path ?? null,
      lines: spec?.lines ?? {},
      environmentName: evidence.environment,
      unmet,
      failures: listFailures(source, excerpts),
      findings: evidence.findings,
    });
  }
  return { report: { decision, runs, approval: null }, pageLinks };
}

/**
 * Publishes the report where a workflow's reader looks: the job summary (gate tables, failed and
 * inconclusive evaluations, findings, evidence links) and annotations on the spec files — the most
 * severe first, as many as GitHub shows, the rest counted.
 */
export async function publishReport({ report, pageLinks }: ReadReport, apiUrl: string, notes: string[]): Promise<void> {
  // Evidence links open its page (signed: a reader needs no key) where one shows it.
  const absolute = evidenceLinker(apiUrl, (kind: PageKind, id: string) => pageLinks.get(`${kind} ${id}`));
  const annotations = specAnnotations(report, absolute);
  const failures = annotations.filter((a) => a.level === "failure");
  const warnings = annotations.filter((a) => a.level === "warning");
  for (const a of failures.slice(0, SHOWN_PER_LEVEL)) {
    core.error(a.message, { title: a.title, file: a.path, startLine: a.line, endLine: a.line });
  }
  for (const a of warnings.slice(0, SHOWN_PER_LEVEL)) {
    core.warning(a.message, { title: a.title, file: a.path, startLine: a.line, endLine: a.line });
  }
  const leftOut = Math.max(0, failures.length - SHOWN_PER_LEVEL) + Math.max(0, warnings.length - SHOWN_PER_LEVEL);
  if (leftOut > 0) {
    core.info(
      `${leftOut} more annotation(s) not shown (GitHub shows ${SHOWN_PER_LEVEL} per level and step): read them in the job summary and the evidence.`,
    );
  }
  const summary = renderDecisionSummary(report, absolute, { limit: SUMMARY_LIMIT - 4096, annotationsLeftOut: leftOut });
  await core.summary.addRaw([summary, ...notes.map((note) => `> ${note}`)].join("\n\n"), true).write();
}
