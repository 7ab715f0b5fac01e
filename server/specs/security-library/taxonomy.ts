import type { ProbeCategory } from "../document-shape.js";

/**
 * The taxonomies a library probe's finding is named in: the OWASP Top 10 for LLM Applications
 * (2025), the OWASP Top 10 for Agentic Applications (2026), and the MITRE ATLAS techniques the
 * families use.
 */

/** OWASP LLM 2025 ids, by the spec format's probe category. */
export const OWASP_LLM_IDS = {
  prompt_injection: "LLM01",
  sensitive_information_disclosure: "LLM02",
  supply_chain: "LLM03",
  data_and_model_poisoning: "LLM04",
  improper_output_handling: "LLM05",
  excessive_agency: "LLM06",
  system_prompt_leakage: "LLM07",
  vector_and_embedding_weaknesses: "LLM08",
  misinformation: "LLM09",
  unbounded_consumption: "LLM10",
} as const satisfies Record<ProbeCategory, string>;
/** The OWASP LLM 2025 entries' names, by id. */
export const OWASP_LLM_2025_NAMES = {
  LLM01: "Prompt Injection",
  LLM02: "Sensitive Information Disclosure",
  LLM03: "Supply Chain",
  LLM04: "Data and Model Poisoning",
  LLM05: "Improper Output Handling",
  LLM06: "Excessive Agency",
  LLM07: "System Prompt Leakage",
  LLM08: "Vector and Embedding Weaknesses",
  LLM09: "Misinformation",
  LLM10: "Unbounded Consumption",
} as const satisfies Record<(typeof OWASP_LLM_IDS)[ProbeCategory], string>;
export type OwaspLlmId = (typeof OWASP_LLM_IDS)[ProbeCategory];

/** OWASP Top 10 for Agentic Applications, 2026 edition. */
export const OWASP_ASI_2026 = {
  ASI01: "Agent Goal Hijack",
  ASI02: "Tool Misuse and Exploitation",
  ASI03: "Identity and Privilege Abuse",
  ASI04: "Agentic Supply Chain Vulnerabilities",
  ASI05: "Unexpected Code Execution",
  ASI06: "Memory and Context Poisoning",
  ASI07: "Insecure Inter-Agent Communication",
  ASI08: "Cascading Failures",
  ASI09: "Human-Agent Trust Exploitation",
  ASI10: "Rogue Agents",
} as const;
export type OwaspAsiId = keyof typeof OWASP_ASI_2026;

/** The MITRE ATLAS techniques the families are named by. */
export const ATLAS_TECHNIQUES = {
  "AML.T0051.000": "LLM Prompt Injection: Direct",
  "AML.T0051.001": "LLM Prompt Injection: Indirect",
  "AML.T0053": "LLM Plugin Compromise",
  "AML.T0054": "LLM Jailbreak",
  "AML.T0056": "LLM Meta Prompt Extraction",
  "AML.T0057": "LLM Data Leakage",
  "AML.T0029": "Denial of ML Service",
  "AML.T0034": "Cost Harvesting",
  "AML.T0031": "Erode ML Model Integrity",
} as const;
export type AtlasId = keyof typeof ATLAS_TECHNIQUES;

/** Where a probe sits in the three taxonomies. */
export interface Classification {
  category: ProbeCategory;
  owasp_asi?: OwaspAsiId | undefined;
  atlas: AtlasId;
}
