import { styleText } from "node:util";
import type { ReleaseDecision } from "../../../server/contract/index.js";
import { excerptParts, FAILURES_SHOWN } from "../../../server/releases/report/failures.js";
import { renderDecisionTitle } from "../../../server/releases/report/render-markdown.js";
import { percent } from "../../../server/specs/pass-rate.js";
import type { CheckRow, RunResult, UnmetCheck } from "./run-results.js";

/** Rows of the table shown in full; past that, only the rows that did not pass every time. */
const FULL_TABLE_ROWS = 40;

type Color = "green" | "red" | "yellow" | "dim" | "bold";

export interface TextStyle {
  paint(color: Color, text: string): string;
}

export const plainStyle: TextStyle = { paint: (_color, text) => text };
export const colorStyle: TextStyle = { paint: (color, text) => styleText(color, text) };

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function table(rows: string[][], style: TextStyle, paintRow: (row: number) => Color | undefined): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row, index) => {
    const line = row.map((cell, column) =>
      column >= 3 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
    );
    const text = `  ${line.join("  ").trimEnd()}`;
    const color = index === 0 ? "dim" : paintRow(index - 1);
    return color ? style.paint(color, text) : text;
  });
}

function checkCells(row: CheckRow): string[] {
  const decided =
    row.passed === row.total
      ? ""
      : [
          row.failed && `${row.failed} failed`,
          row.inconclusive && `${row.inconclusive} inconclusive`,
          row.errored && `${row.errored} errored`,
        ]
          .filter(Boolean)
          .join(", ");
  return [
    clip(row.case, 32),
    clip(row.check, 56),
    row.line === undefined ? "" : String(row.line),
    `${row.passed}/${row.total}`,
    `${percent(row.interval.lower)}–${percent(row.interval.upper)}`,
    decided,
  ];
}

function failureLines(run: RunResult, unmet: UnmetCheck, style: TextStyle): string[] {
  const mark = unmet.status === "failed" ? style.paint("red", "✗") : style.paint("yellow", "?");
  const where = unmet.line === undefined ? run.spec.path : `${run.spec.path}:${unmet.line}`;
  const notPassed = unmet.total - unmet.passed;
  const lines = [
    `  ${mark} ${unmet.case}  ${unmet.check}  ${style.paint("dim", where)}`,
    `      ${unmet.status} in ${notPassed} of ${unmet.total}: ${clip(oneLine(unmet.reason), 300)}`,
  ];
  for (const excerpt of unmet.excerpts) {
    const { at, reply, calls } = excerptParts(excerpt);
    const said = reply === null ? "no reply" : `said "${reply}"`;
    lines.push(style.paint("dim", `      ${at}: ${said}; ${calls === null ? "called no tool" : `called ${calls}`}`));
  }
  return lines;
}

/** One run as the terminal shows it: its checks by case, its failures with the agent's words, its gates. */
export function renderRun(run: RunResult, style: TextStyle): string {
  const { evidence } = run;
  const verdictColor: Color = evidence.verdict === "PASS" ? "green" : evidence.verdict === "FAIL" ? "red" : "yellow";
  const conversations =
    run.checks.length > 0 ? ` · ${plural(new Set(run.checks.map((c) => c.case)).size, "case")}` : "";
  const lines = [
    `${style.paint("bold", run.spec.name)} ${style.paint("dim", `(${run.spec.path}, ${run.spec.spec_version.slice(0, 19)})`)} — ${evidence.status}, ${style.paint(verdictColor, evidence.verdict)}${conversations}`,
  ];
  if (evidence.failure) lines.push(style.paint("red", `  ${evidence.failure.cause}: ${evidence.failure.message}`));
  if (run.droppedGates.length > 0) {
    lines.push(
      style.paint("dim", `  left out by --scenario: gate ${run.droppedGates.join(", ")} (it judges no case that ran)`),
    );
  }

  const shown = run.checks.length <= FULL_TABLE_ROWS ? run.checks : run.checks.filter((c) => c.passed !== c.total);
  if (shown.length > 0) {
    lines.push(
      ...table([["Case", "Check", "Line", "Passed", "95% interval", ""], ...shown.map(checkCells)], style, (row) =>
        shown[row]!.failed > 0 ? "red" : shown[row]!.passed !== shown[row]!.total ? "yellow" : undefined,
      ),
    );
  }
  if (shown.length < run.checks.length) {
    const rest = run.checks.length - shown.length;
    lines.push(
      style.paint(
        "dim",
        shown.length === 0
          ? `  All ${plural(rest, "check")} passed every time (--json or --junit lists each)`
          : `  …and ${plural(rest, "more check")} that passed every time (--json or --junit lists each)`,
      ),
    );
  }

  if (run.unmet.length > 0 || run.unmetRunWide.length > 0) {
    lines.push("", "  Not passed:");
    for (const unmet of run.unmet.slice(0, FAILURES_SHOWN)) lines.push(...failureLines(run, unmet, style));
    if (run.unmet.length > FAILURES_SHOWN) {
      lines.push(style.paint("dim", `  …and ${plural(run.unmet.length - FAILURES_SHOWN, "more check")} not passed`));
    }
    for (const evaluation of run.unmetRunWide) {
      lines.push(
        `  ${style.paint("red", "✗")} ${evaluation.metric_id}: ${evaluation.status}: ${clip(oneLine(evaluation.reason), 300)}`,
      );
    }
  }

  lines.push("", "  Gates:");
  if (evidence.gates.length === 0) {
    lines.push(style.paint("dim", "    none decided (the run did not reach its evaluation)"));
  }
  for (const gate of evidence.gates) {
    const [mark, color]: [string, Color] =
      gate.status === "passed" || gate.status === "waived"
        ? ["✓", "green"]
        : gate.status === "failed"
          ? ["✗", "red"]
          : ["?", "yellow"];
    lines.push(
      `    ${style.paint(color, `${mark} ${gate.id}`)} ${gate.title ? `${gate.title}: ` : ""}${style.paint(color, gate.status)} — ${clip(oneLine(gate.reason), 300)}`,
    );
  }
  return lines.join("\n");
}

/** The closing line: the release decision on every run, and what `assure test` exits with. */
export function renderDecision(decision: ReleaseDecision, exitCode: number, style: TextStyle): string {
  const color: Color = decision.status === "ALLOWED" ? "green" : exitCode === 1 ? "red" : "yellow";
  return `${style.paint(color, style.paint("bold", renderDecisionTitle({ decision })))} ${style.paint("dim", `(exit ${exitCode})`)}`;
}
