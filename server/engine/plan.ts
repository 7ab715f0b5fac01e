import type { SecurityProbe, TestSpecDocument, Tool } from "../contract/index.js";
import { limitsOf } from "../specs/limits.js";
import { fillTools, scenarioCases } from "../specs/scenario-cases.js";

export { DEFAULT_LIMITS, limitsOf } from "../specs/limits.js";
import type { Injection } from "./tool-mocks.js";
import { setAtPath } from "../specs/result-path.js";

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

/** Names a planned conversation: the same for every attempt at it. */
export const planKey = ({
  kind,
  scenario_id,
  repeat_index,
}: Pick<ConversationPlan, "kind" | "scenario_id" | "repeat_index">) => `${kind}\0${scenario_id}\0${repeat_index}`;

/**
 * Every conversation a spec asks for, in a fixed order, so a resumed run knows what is left. Made
 * one at a time as they are asked for: a suite of thousands is never all in memory.
 */
export function* planConversations(
  spec: TestSpecDocument,
  { includeProbes = false } = {},
): Generator<ConversationPlan> {
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
        turns: [{ user: probe.user }, ...(probe.next_turns ?? []).map((turn) => ({ user: turn.user }))],
        tools: probe.plant ? plantedTools(tools, probe.plant) : tools,
        max_steps: limits.max_steps,
        timeout_ms: limits.timeout_ms,
        injection: probe.inject,
        canary: probe.canary === true,
      };
    }
  }
}

/** The tools with a probe's planted values in every mocked result of the tools they name (the spec's own are left as written). */
export function plantedTools(tools: readonly Tool[], plants: NonNullable<SecurityProbe["plant"]>): Tool[] {
  return tools.map((tool) => {
    const own = plants.filter((plant) => plant.tool === tool.name);
    if (own.length === 0 || !tool.mock) return tool;
    return {
      ...tool,
      mock: tool.mock.map((entry) => {
        const planted = structuredClone(entry.return);
        for (const plant of own) setAtPath(planted, plant.field, structuredClone(plant.value));
        return { ...entry, return: planted };
      }),
    };
  });
}

/** Of each planned conversation's completed tries, the last one (the one its evaluations use). */
export function lastTries<
  C extends Pick<ConversationPlan, "kind" | "scenario_id" | "repeat_index"> & { retry: number },
>(completed: readonly C[]): C[] {
  const last = new Map<string, C>();
  for (const c of completed) {
    const key = planKey(c);
    const seen = last.get(key);
    if (!seen || c.retry > seen.retry) last.set(key, c);
  }
  return [...last.values()];
}
