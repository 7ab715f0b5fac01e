import type { TestSpecDocument } from "./document.js";
import { gitBlobSha, sha256Hex, toCanonicalJson } from "./canonical-json.js";
import type { SpecSource } from "./read-yaml.js";
import { originsOf } from "./security-library/expand.js";

/** A validated spec as it is stored: its canonical JSON, content address and, from YAML, the lines of its parts. */
export interface SpecVersion {
  document: TestSpecDocument;
  canonical: string;
  /**
   * `git:<blob SHA>` of the file's bytes when it came from a repository, else `sha256:<hex>` of the
   * canonical JSON — also for a repository's file that read tables, since its bytes alone do not say what runs.
   */
  spec_version: string;
  /** Line of each part that evaluations cite by `spec_path`, when the spec came as YAML. */
  lines: Record<string, number> | null;
}

export function toSpecVersion(
  document: TestSpecDocument,
  source?: SpecSource,
  { fromRepository = false, expanded = false } = {},
): SpecVersion {
  const canonical = toCanonicalJson(document);
  const spec_version =
    fromRepository && source && !expanded ? `git:${gitBlobSha(source.bytes)}` : `sha256:${sha256Hex(canonical)}`;
  return { document, canonical, spec_version, lines: source ? specLines(document, source) : null };
}

/**
 * The line of every part of a spec that an evaluation, finding or gate can cite: scenarios and
 * their expectations and metrics, security probes, and gates. Keyed by `spec_path`.
 */
function specLines(document: TestSpecDocument, source: SpecSource): Record<string, number> {
  const lines: Record<string, number> = {};
  const note = (path: (string | number)[], at: (string | number)[] = path) => {
    const line = source.lineOf(at);
    if (line !== undefined) {
      lines[
        path.reduce<string>(
          (out, part) => (typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${part}` : part),
          "",
        )
      ] = line;
    }
  };
  (document.scenarios ?? []).forEach((scenario, s) => {
    note(["scenarios", s]);
    scenario.turns.forEach((turn, t) =>
      (turn.expect ?? []).forEach((_, e) => note(["scenarios", s, "turns", t, "expect", e])),
    );
    (scenario.expect ?? []).forEach((_, e) => note(["scenarios", s, "expect", e]));
    (scenario.metrics ?? []).forEach((_, m) => note(["scenarios", s, "metrics", m]));
  });
  // A probe the security library made is at the line of the entry it came from.
  const origins = originsOf(document);
  (document.security ?? []).forEach((probe, p) => {
    const origin = origins?.[p] ?? p;
    const generated = origins !== undefined && probe.library !== undefined;
    note(["security", p], ["security", origin]);
    probe.fail_if.forEach((_, f) =>
      note(["security", p, "fail_if", f], generated ? ["security", origin] : ["security", origin, "fail_if", f]),
    );
  });
  document.gates.forEach((_, g) => note(["gates", g]));
  return lines;
}
