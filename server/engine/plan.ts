import type { TestSpecDocument, Tool } from "../contract/index.js";
import { fillTools, scenarioCases } from "../specs/scenario-cases.js";
import type { Injection } from "./tool-mocks.js";

/** One conversation to hold with the agent: a scenario (or probe) at one repeat. */
export interface ConversationPlan {
  kind: "scenario" | "probe";
  scenario_id: string;
  repeat_index: number;
  system: string | undefined;
  turns: { user: string }[];
  /** The tools the agent is offered, with the mocks that answer them. */
  tools: readonly Tool[];
  max_steps: number;
  timeout_ms: number;
  injection: Injection | undefined;
  canary: boolean;
}

export const DEFAULT_LIMITS = { max_steps: 8, timeout_ms: 30_000, repeat: 1, concurrency: 8, run_timeout_ms: 6 * 3_600_000 } as const;

/** The spec's run limits, its defaults filled in. */
export function limitsOf(spec: TestSpecDocument): { -readonly [K in keyof typeof DEFAULT_LIMITS]: number } {
  return { ...DEFAULT_LIMITS, ...spec.defaults };
}

/** Names a planned conversation: the same for every attempt at it. */
export const planKey = ({ kind, scenario_id, repeat_index }: Pick<ConversationPlan, "kind" | "scenario_id" | "repeat_index">) =>
  `${kind}\0${scenario_id}\0${repeat_index}`;

/**
 * Every conversation a spec asks for, in a fixed order, so a resumed run knows what is left. Made
 * one at a time as they are asked for: a suite of thousands is never all in memory.
 */
export function* planConversations(spec: TestSpecDocument, { includeProbes = false } = {}): Generator<ConversationPlan> {
  const limits = limitsOf(spec);
  const tools = spec.tools ?? [];
  for (const { id, scenario, row } of scenarioCases(spec)) {
    const repeat = scenario.repeat ?? limits.repeat;
    const toolsOfRow = row ? fillTools(tools, row) : tools;
    for (let r = 1; r <= repeat; r++) {
      yield {
        kind: "scenario",
        scenario_id: id,
        repeat_index: r,
        system: scenario.system,
        turns: scenario.turns.map((turn) => ({ user: turn.user })),
        tools: toolsOfRow,
        max_steps: scenario.max_steps ?? limits.max_steps,
        timeout_ms: scenario.timeout_ms ?? limits.timeout_ms,
        injection: undefined,
        canary: false,
      };
    }
  }
  if (!includeProbes) return;
  for (const probe of spec.security ?? []) {
    const repeat = probe.repeat ?? 1;
    for (let r = 1; r <= repeat; r++) {
      yield {
        kind: "probe",
        scenario_id: probe.id,
        repeat_index: r,
        system: probe.system,
        turns: [{ user: probe.user }],
        tools,
        max_steps: limits.max_steps,
        timeout_ms: limits.timeout_ms,
        injection: probe.inject,
        canary: probe.canary === true,
      };
    }
  }
}
