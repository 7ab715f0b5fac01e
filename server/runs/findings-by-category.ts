import type { Finding } from "../contract/index.js";

/** A run's findings of one OWASP LLM 2025 category, as its reports group them. */
export interface FindingGroup {
  /** LLM01…LLM10. */
  id: string;
  /** `LLM01:2025 Prompt Injection`. */
  title: string;
  /** The Agentic 2026 ids its findings also name. */
  asi: string[];
  findings: Finding[];
}

/** The findings grouped by their OWASP LLM 2025 category, in the list's order; each group keeps the findings' order. */
export function findingsByCategory(findings: readonly Finding[]): FindingGroup[] {
  const groups = new Map<string, FindingGroup>();
  for (const finding of findings) {
    const id = finding.owasp_llm ?? finding.owasp.split(":")[0]!;
    const group = groups.get(id) ?? { id, title: finding.owasp, asi: [], findings: [] };
    if (finding.owasp_asi && !group.asi.includes(finding.owasp_asi)) group.asi.push(finding.owasp_asi);
    group.findings.push(finding);
    groups.set(id, group);
  }
  for (const group of groups.values()) group.asi.sort();
  return [...groups.values()].sort((a, b) => a.id.localeCompare(b.id));
}
