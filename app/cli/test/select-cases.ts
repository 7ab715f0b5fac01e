import picomatch from "picomatch";
import { versionRow, type ReadVersion } from "../../../server/spec-reader/read-spec.js";
import { TestSpecDocument } from "../../../server/specs/document.js";
import { formatSpecPath } from "../../../server/specs/read-yaml.js";
import { toSpecVersion } from "../../../server/specs/spec-version.js";
import type { LocalSpec } from "../local-spec.js";

/** What `assure test` was asked to run of each spec, beyond what the spec says. */
export interface CaseSelection {
  /** Globs over scenario and probe ids; none: every one. */
  scenarios: readonly string[];
  repeat?: number | undefined;
  concurrency?: number | undefined;
}

export type Selected =
  | {
      kind: "selected";
      version: ReadVersion;
      document: TestSpecDocument;
      lines: Record<string, number>;
      /** Gates left out because the selection left them nothing to judge. */
      droppedGates: string[];
    }
  /** No scenario or probe of the spec matches. */
  | { kind: "none" }
  | { kind: "invalid"; message: string };

const isEmpty = (selection: CaseSelection) =>
  selection.scenarios.length === 0 && selection.repeat === undefined && selection.concurrency === undefined;

/**
 * The spec as `--scenario`, `--repeat` and `--concurrency` ask for it: only the scenarios and probes
 * whose id matches, each played `repeat` times, at that concurrency. Gates that no longer judge
 * anything (a metric of a scenario left out) are left out; the lines of the parts kept still point
 * into the file. A spec changed so is versioned by its content (sha256), not by its file.
 */
export function selectCases(spec: LocalSpec, selection: CaseSelection): Selected {
  if (isEmpty(selection)) {
    return { kind: "selected", version: spec.version, document: spec.document, lines: spec.lines, droppedGates: [] };
  }
  const matches = selection.scenarios.length > 0 ? picomatch([...selection.scenarios]) : () => true;
  const source = spec.document;
  const scenarios = (source.scenarios ?? [])
    .map((scenario, index) => ({ scenario, index }))
    .filter((s) => matches(s.scenario.id));
  const probes = (source.security ?? []).map((probe, index) => ({ probe, index })).filter((p) => matches(p.probe.id));
  if (scenarios.length === 0 && probes.length === 0) return { kind: "none" };

  const repeat = selection.repeat;
  const draft = structuredClone(source) as TestSpecDocument & Record<string, unknown>;
  draft.scenarios = scenarios.map(({ scenario }) => ({ ...structuredClone(scenario), ...(repeat ? { repeat } : {}) }));
  draft.security = probes.map(({ probe }) => ({ ...structuredClone(probe), ...(repeat ? { repeat } : {}) }));
  if (draft.scenarios.length === 0) delete draft.scenarios;
  if (draft.security.length === 0) delete draft.security;
  if (repeat || selection.concurrency) {
    draft.defaults = {
      ...draft.defaults!,
      ...(repeat ? { repeat } : {}),
      ...(selection.concurrency ? { concurrency: selection.concurrency } : {}),
    };
  }

  // Gates that refer to what was left out are dropped, one round of problems at a time.
  let gates = source.gates.map((gate, index) => ({ gate, index }));
  const droppedGates: string[] = [];
  for (;;) {
    const parsed = TestSpecDocument.safeParse({ ...draft, gates: gates.map(({ gate }) => gate) });
    if (parsed.success) {
      const renames = new Map<string, string>([
        ...scenarios.map(({ index }, at): [string, string] => [`scenarios[${index}]`, `scenarios[${at}]`]),
        ...probes.map(({ index }, at): [string, string] => [`security[${index}]`, `security[${at}]`]),
        ...gates.map(({ index }, at): [string, string] => [`gates[${index}]`, `gates[${at}]`]),
      ]);
      const lines = renameLines(spec.lines, renames);
      const parts = { ...toSpecVersion(parsed.data), lines };
      return {
        kind: "selected",
        version: versionRow(parsed.data, parts, { format: "yaml", text: spec.version.source_text }, null),
        document: parsed.data,
        lines,
        droppedGates,
      };
    }
    const broken = new Set(
      parsed.error.issues.flatMap((issue) =>
        issue.path[0] === "gates" && typeof issue.path[1] === "number" ? [issue.path[1]] : [],
      ),
    );
    const [other] = parsed.error.issues.filter((issue) => issue.path[0] !== "gates" || broken.size === 0);
    if (other) return { kind: "invalid", message: `${formatSpecPath(other.path)}: ${other.message}` };
    if (broken.size === gates.length) {
      return {
        kind: "invalid",
        message: "every gate judges something the selection left out: nothing would decide the release",
      };
    }
    droppedGates.push(...gates.filter((_, at) => broken.has(at)).map(({ gate }) => gate.id));
    gates = gates.filter((_, at) => !broken.has(at));
  }
}

/** The lines of the parts kept, under their new positions; the parts left out have none. */
function renameLines(lines: Record<string, number>, renames: ReadonlyMap<string, string>): Record<string, number> {
  const renamed: Record<string, number> = {};
  for (const [path, line] of Object.entries(lines)) {
    const head = /^(scenarios|security|gates)\[\d+\]/.exec(path)?.[0];
    const to = head === undefined ? path : renames.get(head);
    if (to !== undefined) renamed[head === undefined ? path : to + path.slice(head.length)] = line;
  }
  return renamed;
}
