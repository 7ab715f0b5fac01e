import type { SecurityProbe, TestSpecDocument } from "../document-shape.js";
import { familyNamed } from "./families/index.js";
import { OWASP_ASI_2026, OWASP_LLM_2025_NAMES, OWASP_LLM_IDS } from "./taxonomy.js";

/** A category of the OWASP LLM 2025 or Agentic 2026 list, as a run probed it. */
export interface CoverageRow {
  taxonomy: "owasp_llm" | "owasp_asi";
  /** LLM01…LLM10, ASI01…ASI10. */
  id: string;
  name: string;
  /** At least one of its probes ran and was decided (passed or tripped), not all inconclusive. */
  probed: boolean;
  probes: number;
  tripped: number;
  /** Its probes that no conversation decided (inconclusive, errored, or not evaluated). */
  inconclusive: number;
  /** Why it was not probed; null when it was. */
  not_probed: string | null;
}

/** A probe's evaluation, as the table counts it. */
export interface ProbeOutcome {
  metric_id: string;
  status: "passed" | "failed" | "inconclusive" | "errored";
}

const LLM_NAMES: Readonly<Record<string, string>> = OWASP_LLM_2025_NAMES;
const ASI_NAMES: Readonly<Record<string, string>> = OWASP_ASI_2026;

/** The categories a probe is named in: its OWASP LLM id, and its Agentic id where one applies. */
export const categoriesOfProbe = (probe: SecurityProbe): string[] => [
  probe.library?.owasp_llm ?? OWASP_LLM_IDS[probe.category],
  ...(probe.library?.owasp_asi ? [probe.library.owasp_asi] : []),
];

/**
 * The run's coverage table: every OWASP LLM 2025 category, and each Agentic 2026 category the
 * spec's probes or library entries name, with how many probes it had, how many tripped and how
 * many no conversation decided — and, for one not probed, why (the library's note when it cannot
 * be tested from outside or had no suitable tool). Null for a spec without security probes.
 */
export function coverageTable(spec: TestSpecDocument, evaluations: readonly ProbeOutcome[]): CoverageRow[] | null {
  const probes = spec.security ?? [];
  const notes = spec.security_coverage ?? [];
  if (probes.length === 0 && notes.length === 0) return null;
  const outcomes = new Map<string, ProbeOutcome["status"][]>();
  for (const evaluation of evaluations) {
    if (!evaluation.metric_id.startsWith("probe.")) continue;
    const id = evaluation.metric_id.slice("probe.".length);
    outcomes.set(id, [...(outcomes.get(id) ?? []), evaluation.status]);
  }
  const outcomeOf = (probe: SecurityProbe): "tripped" | "passed" | "inconclusive" => {
    const statuses = outcomes.get(probe.id) ?? [];
    if (statuses.includes("failed")) return "tripped";
    return statuses.includes("passed") ? "passed" : "inconclusive";
  };
  const asiIds = new Set<string>();
  for (const probe of probes) {
    if (probe.library?.owasp_asi) asiIds.add(probe.library.owasp_asi);
  }
  for (const category of notes.flatMap((note) => note.categories)) {
    if (category.id in ASI_NAMES) asiIds.add(category.id);
  }
  const rows = [
    ...Object.keys(LLM_NAMES).map((id) => ({ taxonomy: "owasp_llm" as const, id, name: LLM_NAMES[id]! })),
    ...Object.keys(ASI_NAMES)
      .filter((id) => asiIds.has(id))
      .map((id) => ({ taxonomy: "owasp_asi" as const, id, name: ASI_NAMES[id]! })),
  ];
  return rows.map((row): CoverageRow => {
    const mine = probes.filter((probe) => categoriesOfProbe(probe).includes(row.id)).map(outcomeOf);
    const tripped = mine.filter((outcome) => outcome === "tripped").length;
    const inconclusive = mine.filter((outcome) => outcome === "inconclusive").length;
    const probed = mine.length > inconclusive;
    return {
      ...row,
      probed,
      probes: mine.length,
      tripped,
      inconclusive,
      not_probed: probed ? null : whyNotProbed(row.id, mine.length, spec),
    };
  });
}

function whyNotProbed(id: string, probes: number, spec: TestSpecDocument): string {
  if (probes > 0) return `its ${probes} probe(s) were inconclusive: no conversation decided them`;
  const notes = spec.security_coverage ?? [];
  const notTestable = notes.flatMap((note) => note.categories).find((category) => category.id === id)?.not_testable;
  if (notTestable) return `not testable from outside: ${notTestable}`;
  const skipped = notes
    .flatMap((note) => note.skipped)
    .filter((skip) => {
      const family = familyNamed(skip.family);
      return (
        family !== undefined &&
        (OWASP_LLM_IDS[family.classification.category] === id || family.classification.owasp_asi === id)
      );
    })
    .map((skip) => `${skip.family}: ${skip.reason}`);
  if (skipped.length > 0) return `no probe generated (${[...new Set(skipped)].join("; ")})`;
  return "no probe in the spec names it";
}
