/** A strategy, or strategies applied in order (a combination). */
export type StrategyItem = string | readonly string[];

/** A named selection of families, each also sent with some strategies, covering one taxonomy. */
export interface Preset {
  name: string;
  title: string;
  /** The taxonomy whose entries its coverage counts. */
  taxonomy: "owasp_llm" | "owasp_asi";
  families: readonly { family: string; strategies: readonly StrategyItem[] }[];
  /** The taxonomy's entries no probe can test from outside the agent, and why. */
  notTestable: Readonly<Record<string, string>>;
}

const ENCODINGS = ["base64", "rot13", "leetspeak", "homoglyphs"] as const;

export const PRESETS: readonly Preset[] = [
  {
    name: "owasp-llm-2025",
    title: "OWASP Top 10 for LLM Applications 2025",
    taxonomy: "owasp_llm",
    families: [
      {
        family: "direct-injection",
        strategies: [...ENCODINGS, "language-switch", "payload-splitting", "many-shot", ["base64", "many-shot"]],
      },
      { family: "indirect-injection", strategies: [] },
      {
        family: "system-prompt-leakage",
        strategies: ["base64", "rot13", "language-switch", "payload-splitting", "many-shot"],
      },
      { family: "sensitive-information-disclosure", strategies: ["homoglyphs", "language-switch"] },
      { family: "excessive-agency", strategies: [] },
      { family: "improper-output-handling", strategies: ["language-switch"] },
      { family: "unbounded-consumption", strategies: [] },
      { family: "misinformation", strategies: ["language-switch"] },
    ],
    notTestable: {
      LLM03:
        "Supply chain: the provenance of the model, its adapters and packages is not seen in a conversation; review it with an SBOM and model cards.",
      LLM04:
        "Data and model poisoning: the training and fine-tuning data are not reachable from a conversation with the deployed agent.",
      LLM08:
        "Vector and embedding weaknesses: the retrieval store itself (access across tenants, embedding inversion) is not reachable from outside; instructions planted in retrieved content are probed by indirect-injection when the retrieval is a mocked tool.",
    },
  },
  {
    name: "owasp-agentic-2026",
    title: "OWASP Top 10 for Agentic Applications 2026",
    taxonomy: "owasp_asi",
    families: [
      { family: "direct-injection", strategies: [] },
      { family: "indirect-injection", strategies: [] },
      { family: "multi-turn-escalation", strategies: [] },
      { family: "tool-misuse", strategies: ["base64", "many-shot"] },
      { family: "excessive-agency", strategies: [] },
      { family: "privilege-escalation", strategies: ["language-switch", "payload-splitting"] },
      { family: "sensitive-information-disclosure", strategies: [] },
      { family: "improper-output-handling", strategies: [] },
      { family: "misinformation", strategies: [] },
    ],
    notTestable: {
      ASI04:
        "Agentic supply chain: the tools, MCP servers and prompts the agent loads at run time are the environment's, not the conversation's.",
      ASI06:
        "Memory and context poisoning: memory kept across sessions is not reachable from one conversation; poisoned context within a conversation is probed as goal hijack (ASI01) through tool results.",
      ASI07:
        "Insecure inter-agent communication: needs a second agent on the wire, which a conversation with one agent does not have.",
      ASI08: "Cascading failures: spread across agents and systems, beyond one agent's conversation.",
      ASI10: "Rogue agents: behaviour over time and across deployments, beyond a conversation's trace.",
    },
  },
];
export const PRESET_NAMES = PRESETS.map((preset) => preset.name) as [string, ...string[]];
export const presetNamed = (name: string): Preset | undefined => PRESETS.find((preset) => preset.name === name);
