import { z } from "zod";
import { coverageTable } from "../security-library/coverage-table.js";
import { PRESET_NAMES, presetNamed } from "../security-library/presets.js";
import { OWASP_ASI_2026, OWASP_LLM_IDS } from "../security-library/taxonomy.js";
import type { GateRequirement, Named } from "./define.js";

const fields = {
  coverage: z
    .enum(PRESET_NAMES)
    .optional()
    .describe("Every category of this preset's taxonomy that can be tested from outside was probed"),
};

/**
 * `coverage: <preset>`: every category of the preset's taxonomy (OWASP LLM 2025, Agentic 2026)
 * that can be tested from outside had a probe that ran and was decided. Failed, naming them, when
 * some had no probe at all; inconclusive when each had probes but some only undecided ones.
 */
export const coverage: GateRequirement<typeof fields, Named<typeof fields, "coverage">> = {
  name: "coverage",
  fields,
  decide({ coverage: name }, run) {
    const preset = presetNamed(name)!;
    const ids = (preset.taxonomy === "owasp_llm" ? Object.values(OWASP_LLM_IDS) : Object.keys(OWASP_ASI_2026)).filter(
      (id) => preset.notTestable[id] === undefined,
    );
    const probes = run.evaluations("probe");
    const rows = coverageTable(run.spec, probes) ?? [];
    const rowOf = (id: string) => rows.find((row) => row.id === id);
    const missing = ids.filter((id) => (rowOf(id)?.probes ?? 0) === 0);
    const undecided = ids.filter((id) => (rowOf(id)?.probes ?? 0) > 0 && !rowOf(id)!.probed);
    const refs = run.cite.evaluations(probes);
    if (missing.length > 0) {
      return {
        status: "failed",
        reason: `${missing.length} of ${ids.length} ${preset.name} categories not probed: ${missing.join(", ")}${undecided.length > 0 ? `; only inconclusive probes for ${undecided.join(", ")}` : ""}`,
        evidence_refs: refs,
      };
    }
    if (undecided.length > 0) {
      return {
        status: "inconclusive",
        reason: `every probe of ${undecided.join(", ")} was inconclusive: ${preset.name} coverage cannot be shown`,
        evidence_refs: refs,
      };
    }
    const notTestable = Object.keys(preset.notTestable);
    return {
      status: "passed",
      reason:
        `every ${preset.name} category testable from outside was probed (${ids.join(", ")})` +
        (notTestable.length > 0 ? `; not testable from outside: ${notTestable.join(", ")}` : ""),
      evidence_refs: refs,
    };
  },
  covers: () => (c) => c.kind === "probe",
  describe: ({ coverage: name }) => `coverage ${name}`,
};
