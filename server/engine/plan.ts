import type { TestSpecDocument } from "../contract/index.js";
import type { Injection } from "./tool-mocks.js";

/** One conversation to hold with the agent: a scenario (or probe) at one repeat. */
export interface ConversationPlan {
  kind: "scenario" | "probe";
  scenario_id: string;
  repeat_index: number;
  system: string | undefined;
  turns: { user: string }[];
  max_steps: number;
  timeout_ms: number;
  injection: Injection | undefined;
  canary: boolean;
}

export const DEFAULT_LIMITS = { max_steps: 8, timeout_ms: 30_000, repeat: 1 } as const;

/** Every conversation a spec asks for, in a fixed order, so a resumed run knows what is left. */
export function planConversations(spec: TestSpecDocument, { includeProbes = false } = {}): ConversationPlan[] {
  const defaults = { ...DEFAULT_LIMITS, ...spec.defaults };
  const plans: ConversationPlan[] = [];
  for (const scenario of spec.scenarios ?? []) {
    const repeat = scenario.repeat ?? defaults.repeat;
    for (let r = 1; r <= repeat; r++) {
      plans.push({
        kind: "scenario",
        scenario_id: scenario.id,
        repeat_index: r,
        system: scenario.system,
        turns: scenario.turns.map((turn) => ({ user: turn.user })),
        max_steps: scenario.max_steps ?? defaults.max_steps,
        timeout_ms: scenario.timeout_ms ?? defaults.timeout_ms,
        injection: undefined,
        canary: false,
      });
    }
  }
  if (includeProbes) {
    for (const probe of spec.security ?? []) {
      const repeat = probe.repeat ?? 1;
      for (let r = 1; r <= repeat; r++) {
        plans.push({
          kind: "probe",
          scenario_id: probe.id,
          repeat_index: r,
          system: probe.system,
          turns: [{ user: probe.user }],
          max_steps: defaults.max_steps,
          timeout_ms: defaults.timeout_ms,
          injection: probe.inject,
          canary: probe.canary === true,
        });
      }
    }
  }
  return plans;
}
