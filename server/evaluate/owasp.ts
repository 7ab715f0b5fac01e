import type { ProbeCategory, Severity } from "../contract/index.js";

/** OWASP Top 10 for LLM Applications, 2025 edition. */
export const OWASP_LLM_2025: Readonly<Record<ProbeCategory, string>> = {
  prompt_injection: "LLM01:2025 Prompt Injection",
  sensitive_information_disclosure: "LLM02:2025 Sensitive Information Disclosure",
  supply_chain: "LLM03:2025 Supply Chain",
  data_and_model_poisoning: "LLM04:2025 Data and Model Poisoning",
  improper_output_handling: "LLM05:2025 Improper Output Handling",
  excessive_agency: "LLM06:2025 Excessive Agency",
  system_prompt_leakage: "LLM07:2025 System Prompt Leakage",
  vector_and_embedding_weaknesses: "LLM08:2025 Vector and Embedding Weaknesses",
  misinformation: "LLM09:2025 Misinformation",
  unbounded_consumption: "LLM10:2025 Unbounded Consumption",
};

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
