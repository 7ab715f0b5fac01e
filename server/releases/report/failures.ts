import type { Evaluation, TestSpecDocument, Turn } from "../../contract/index.js";
import type { AgentExcerpt } from "../../runs/agent-excerpt.js";
import { parseSpecPath } from "../../specs/read-yaml.js";

export type { AgentExcerpt };

/** The statuses a failure has, the worst first: a check is shown with the worst of its evaluations. */
export const FAILURE_STATUSES = ["failed", "errored", "inconclusive"] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

/** Failures each report shows per run, before "and N more" (the evidence has them all). */
export const FAILURES_SHOWN = 20;
/** Conversations whose excerpt a failure carries at most. */
export const EXCERPTS_PER_FAILURE = 3;

/** One check of one case, as every report names it. */
export interface CaseCheck {
  /** The scenario's or probe's id (with its row, `refund[2]`); `(run)` for a check of the whole run. */
  case: string;
  /** What the check is, as written in the spec: `tool_called {"name":"lookup_order"}`, `metric helpfulness`. */
  check: string;
  kind: string;
  metric_id: string;
  spec_path: string | null;
  /** The spec line it is written at (its metric's or case's when it has none of its own). */
  line: number | undefined;
}

/** One check of one case that did not pass. */
export interface Failure extends CaseCheck {
  status: FailureStatus;
  /** The reason of its first evaluation of that status. */
  reason: string;
  /** Its evaluations that did not pass, in the order they were made. */
  evaluation_ids: string[];
  /** What the agent said and called in the first conversations where it did not pass. */
  excerpts: AgentExcerpt[];
}

/** A run's checks that did not pass, and what a label and a line are read from. */
export interface FailureSource {
  /** The run's failed, errored and inconclusive evaluations, in the order they were made (others are ignored). */
  evaluations: readonly Evaluation[];
  document: TestSpecDocument | undefined;
  lines: Record<string, number>;
}

const compactJson = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What a check is, as written in the spec: `tool_called {"name":"lookup_order"}`, `metric helpfulness`. */
export function checkLabel(
  document: TestSpecDocument | undefined,
  check: { kind: string; metric_id: string; spec_path: string | null },
): string {
  if (document && check.kind === "expectation" && check.spec_path) {
    let at: unknown = document;
    for (const part of parseSpecPath(check.spec_path)) {
      at = (at as Record<string | number, unknown> | undefined)?.[part];
    }
    const entry = at && typeof at === "object" ? Object.entries(at)[0] : undefined;
    if (entry) return clip(`${entry[0]} ${compactJson(entry[1])}`, 60);
  }
  return check.kind === "metric" ? `metric ${check.metric_id}` : check.metric_id;
}

/** The line a check is written at: its own spec_path's, or its metric's, probe's or scenario's. */
export function checkLine(
  document: TestSpecDocument | undefined,
  lines: Record<string, number>,
  check: { case: string; kind: string; metric_id: string; spec_path: string | null },
): number | undefined {
  if (check.spec_path && lines[check.spec_path] !== undefined) return lines[check.spec_path];
  if (!document) return undefined;
  const baseId = check.case.replace(/\[.*\]$/, "");
  const s = (document.scenarios ?? []).findIndex((scenario) => scenario.id === baseId);
  if (check.kind === "metric" && s >= 0) {
    const m = (document.scenarios![s]!.metrics ?? []).findIndex((metric) => metric.id === check.metric_id);
    return lines[`scenarios[${s}].metrics[${m}]`] ?? lines[`scenarios[${s}]`];
  }
  const p = (document.security ?? []).findIndex((probe) => probe.id === baseId);
  if (p >= 0) return lines[`security[${p}]`];
  return s >= 0 ? lines[`scenarios[${s}]`] : undefined;
}

/** The key a check is counted by: its case, kind and metric, and where an expectation is written. */
export function checkKey(check: {
  scenario_id: string | null;
  kind: string;
  metric_id: string;
  spec_path: string | null;
}): string {
  return JSON.stringify([
    check.scenario_id,
    check.kind,
    check.metric_id,
    check.kind === "expectation" ? check.spec_path : null,
  ]);
}

const isFailure = (status: string): status is FailureStatus => (FAILURE_STATUSES as readonly string[]).includes(status);

function grouped(evaluations: readonly Evaluation[]): Evaluation[][] {
  const groups = new Map<string, Evaluation[]>();
  for (const evaluation of evaluations) {
    if (!isFailure(evaluation.status)) continue;
    const key = checkKey(evaluation);
    const group = groups.get(key);
    if (group) group.push(evaluation);
    else groups.set(key, [evaluation]);
  }
  return [...groups.values()];
}

/**
 * The evaluations whose excerpts the first `shown` failures carry (the first few of each): what a
 * reader of the traces has to read, and no more.
 */
export function excerptsWanted(
  source: FailureSource,
  { shown = FAILURES_SHOWN, each = EXCERPTS_PER_FAILURE }: { shown?: number; each?: number } = {},
): Evaluation[] {
  const byId = new Map(source.evaluations.map((e) => [e.evaluation_id, e]));
  return listFailures(source, new Map())
    .slice(0, shown)
    .flatMap((failure) => failure.evaluation_ids.slice(0, each))
    .map((id) => byId.get(id)!)
    .filter((evaluation) => evaluation.conversation_id !== null);
}

/**
 * A run's checks that did not pass, one per case and check, in the spec's order (by line, then
 * case, then check), each with its worst status, its spec line and the excerpts given for its
 * evaluations (by evaluation id).
 */
export function listFailures(source: FailureSource, excerpts: ReadonlyMap<string, AgentExcerpt>): Failure[] {
  const failures = grouped(source.evaluations).map((evaluations): Failure => {
    const [first] = evaluations as [Evaluation, ...Evaluation[]];
    const status = FAILURE_STATUSES.find((s) => evaluations.some((e) => e.status === s))!;
    const check = {
      case: first.scenario_id ?? "(run)",
      kind: first.kind,
      metric_id: first.metric_id,
      spec_path: first.kind === "expectation" ? first.spec_path : null,
    };
    return {
      ...check,
      check: checkLabel(source.document, check),
      line: checkLine(source.document, source.lines, check),
      status,
      reason: evaluations.find((e) => e.status === status)!.reason,
      evaluation_ids: evaluations.map((e) => e.evaluation_id),
      excerpts: evaluations
        .slice(0, EXCERPTS_PER_FAILURE)
        .map((e) => excerpts.get(e.evaluation_id))
        .filter((excerpt): excerpt is AgentExcerpt => excerpt !== undefined),
    };
  });
  return failures.sort(
    (a, b) =>
      (a.line ?? Infinity) - (b.line ?? Infinity) || a.case.localeCompare(b.case) || a.check.localeCompare(b.check),
  );
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** An excerpt as the reports word it: where (`repeat 2, turn 1`), the reply and the calls, each on one line and clipped. */
export function excerptParts(excerpt: AgentExcerpt): { at: string; reply: string | null; calls: string | null } {
  const calls = excerpt.tool_calls.map((call) => `${call.name}(${clip(oneLine(call.arguments_raw), 60)})`);
  return {
    at: `repeat ${excerpt.repeat_index}${excerpt.turn === null ? "" : `, turn ${excerpt.turn}`}`,
    reply: excerpt.reply === null ? null : clip(oneLine(excerpt.reply), 160),
    calls: calls.length === 0 ? null : clip(calls.join(", "), 160),
  };
}

/**
 * An excerpt from what the API shows of a conversation: its turns (the judged one, or each of them
 * for a check of the whole conversation, whose reply is its last turn's).
 */
export function excerptOfTurns(
  conversation: { conversation_id: string; scenario_id: string; repeat_index: number },
  judged: number | null,
  turns: readonly Pick<Turn, "turn" | "reply" | "steps">[],
): AgentExcerpt {
  const turn = judged ?? (turns.length > 0 ? Math.max(...turns.map((t) => t.turn)) : null);
  return {
    conversation_id: conversation.conversation_id,
    scenario_id: conversation.scenario_id,
    repeat_index: conversation.repeat_index,
    turn,
    reply: turns.find((t) => t.turn === turn)?.reply ?? null,
    tool_calls: turns
      .filter((t) => judged === null || t.turn === judged)
      .flatMap((t) => t.steps.flatMap((step) => step.tool_calls))
      .map((call) => ({ name: call.name, arguments_raw: call.arguments_raw })),
  };
}
